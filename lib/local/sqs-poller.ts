/**
 * The local stand-in for Lambda's SQS event source mapping: long-poll a
 * queue, hand each batch to the same handler Lambda would run, and delete
 * the records it did not report as failures. Several batches run at once,
 * as several Lambda instances would. Unlike Lambda's, it is its handler's
 * event source (polled-records.ts, given to the runtime through
 * `decoratePorts`): it says since when each record has been hidden, and
 * deletes a record as soon as the handler settles it.
 */
import { ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import { longPollRequestTimeoutMs } from '../aws/clients.ts';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { realSleep, systemClock, type Clock } from '../core/clock.ts';
import type { SqsHandler } from '../lambda/handlers.ts';
import { PolledRecords } from './polled-records.ts';

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsHandler;
  /** @default 10 */
  readonly batchSize?: number;
  /** Batches in flight at once. @default 4 */
  readonly maxConcurrentBatches?: number;
  /** @default DEFAULT_WAIT_TIME_SECONDS */
  readonly waitTimeSeconds?: number;
  readonly onError?: (error: unknown) => void;
  /** The handler's clock, on which each record's `hiddenSince` is read. @default systemClock */
  readonly clock?: Clock;
  /** The records in flight, shared with the handler's runtime as its event source. @default the poller's own (the handler is not told) */
  readonly records?: PolledRecords;
}

/**
 * One second: a worker that dies (or is paused) with a long poll open leaves
 * it on the server, which hands it the next message to become visible. The
 * dead holder's own message comes back two seconds after its death at the
 * earliest (visibility lease − heartbeat, counted from a heartbeat under a
 * heartbeat before it), so a poll that ends within one second never takes it
 * (with 2 s polls a drill saw a 6.2 s failover). Idle, it costs one receive
 * a second per poller; busy, receives return at once either way.
 */
export const DEFAULT_WAIT_TIME_SECONDS = 1;

export class SqsPoller {
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly records: PolledRecords;

  constructor(private readonly options: PollerOptions) {
    this.records =
      options.records ??
      new PolledRecords(
        options.sqs,
        async () => options.queueUrl,
        (error) => options.onError?.(error),
        options.clock ?? systemClock,
      );
  }

  /**
   * Polls until stop() is called; resolves once every batch in flight has
   * finished. A receive already open when stop() is called is not cancelled:
   * the server would still hand it a message (hidden for the visibility
   * timeout), so its batch is processed instead. It returns within
   * `waitTimeSeconds`.
   */
  async run(): Promise<void> {
    const { sqs, queueUrl } = this.options;
    const maxBatches = this.options.maxConcurrentBatches ?? 4;
    while (!this.stopping.signal.aborted) {
      if (this.inFlight.size >= maxBatches) {
        await Promise.race(this.inFlight);
        continue;
      }
      let messages: Message[];
      const clock = this.options.clock ?? systemClock;
      const waitTimeSeconds = this.options.waitTimeSeconds ?? DEFAULT_WAIT_TIME_SECONDS;
      const receive = new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: this.options.batchSize ?? 10,
        WaitTimeSeconds: waitTimeSeconds,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'ApproximateFirstReceiveTimestamp'],
      });
      const sentAt = trackTrySentAt(receive, clock);
      try {
        const received = await sqs.send(receive, { requestTimeout: longPollRequestTimeoutMs(waitTimeSeconds) });
        messages = received.Messages ?? [];
      } catch (error) {
        this.options.onError?.(error);
        await realSleep(500).catch(() => {});
        continue;
      }
      if (messages.length === 0) continue;
      const batch = this.invoke(messages, hiddenSince(sentAt.value, clock.now(), waitTimeSeconds)).finally(() =>
        this.inFlight.delete(batch),
      );
      this.inFlight.add(batch);
    }
    await Promise.allSettled([...this.inFlight]);
    await this.records.settle();
  }

  stop(): void {
    this.stopping.abort();
  }

  private async invoke(messages: Message[], since: number): Promise<void> {
    const receiptHandles = messages.map((message) => message.ReceiptHandle ?? '');
    this.records.received(receiptHandles, since);
    try {
      let failed: Set<string>;
      try {
        const response = await this.options.handler({
          Records: messages.map((message) => toRecord(message, this.options.queueUrl)),
        } satisfies SQSEvent);
        failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      } catch (error) {
        // A thrown handler fails the whole batch, as in Lambda (records it settled as done are deleted already).
        this.options.onError?.(error);
        return;
      }
      // A handler that did not settle each record as it went: its done records go now.
      for (const message of messages) if (!failed.has(message.MessageId ?? '')) this.records.delete(message.ReceiptHandle ?? '');
    } finally {
      this.records.ended(receiptHandles);
    }
  }
}

/**
 * When the receive's last SDK try was sent: only the try whose reply is read can have hidden its messages. Timed from
 * the call, a receive whose first try hung, was throttled, or timed out across a pause of this process read as held
 * up past its wait, and its messages' holders started with the fast takeover disarmed (docs/chaos.md, incidents).
 */
function trackTrySentAt(receive: ReceiveMessageCommand, clock: Clock): { value: number } {
  const sentAt = { value: clock.now() };
  // The deserialize step runs below the retry middleware: once per try.
  receive.middlewareStack.add(
    (next) => (args) => {
      sentAt.value = clock.now();
      return next(args);
    },
    { step: 'deserialize', name: 'cronfenceReceiveTrySentAt' },
  );
  return sentAt;
}

/** A reply later than the long poll's wait by more than this was held up on its way (a loaded queue, a paused process). */
const LATE_REPLY_MS = 500;

/**
 * Since when the received messages have been hidden, at the earliest, as far as the worker needs to know. SQS hides a
 * message as it answers, so a reply that came within the long poll's wait shows its hide within the reply's transit:
 * its arrival. A later reply (held up by a loaded queue, or by a pause of this process while it was on its way) may
 * have spent much of the visibility on the way: then only the send time of the try that answered bounds the hide
 * (`trackTrySentAt`). A LocalStack drill: a receive answered during a 6.8 s pause, its holder started at once and
 * was taken over while it renewed.
 */
export function hiddenSince(sentAt: number, repliedAt: number, waitTimeSeconds: number): number {
  return repliedAt - sentAt > waitTimeSeconds * 1000 + LATE_REPLY_MS ? sentAt : repliedAt;
}

function toRecord(message: Message, queueUrl: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '0',
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '0',
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueUrl,
    awsRegion: process.env.AWS_REGION ?? 'us-east-1',
  };
}
