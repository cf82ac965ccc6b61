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
      const batch = this.invoke(messages, sentAt.value).finally(() => this.inFlight.delete(batch));
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
 * When the receive's last SDK try was sent: since when its messages have been hidden, at the earliest. SQS hides a
 * message as it answers, some time between the try's send and the reply's arrival, and nothing bounds the reply's way
 * back (a loaded emulator, a paused process): counted from the arrival, a reply a second on its way gave the holder a
 * second its message did not have, and a standby took over the live holder. With the 1 s long poll, the send costs
 * at most about a second of the visibility. Only the try whose reply is read can have hidden its messages: timed from
 * the call, a receive whose first try hung or was throttled read as older than it was (docs/chaos.md, incidents).
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
