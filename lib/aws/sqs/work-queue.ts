/**
 * The WorkQueue port over SQS. Delays are what make a slice surface at its
 * second: SQS DelaySeconds (0..900), the worker waits out the sub-second rest.
 */
import {
  ChangeMessageVisibilityCommand,
  MessageNotInflight,
  ReceiptHandleIsInvalid,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Clock } from '../../core/clock.ts';
import { encodeScanMessage, encodeWorkMessage } from '../../core/messages.ts';
import type { DeadLetterRecord, DeadLetterSink, ScanQueue, ScanRequest, WorkMessage, WorkQueue } from '../../core/ports.ts';
import { sendInBatches } from './send-batches.ts';
import { MAX_VISIBILITY_SECONDS, VisibilityBatches } from './visibility-batches.ts';

/** SQS caps both a message delay and nothing else we need at 900 s. */
export const MAX_DELAY_SECONDS = 900;
export class SqsWorkQueue implements WorkQueue {
  /** Visibility changes a batch asks for at once (its claims, its early messages) share a request. */
  private readonly batchedVisibility: VisibilityBatches;

  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
    /** Whose timers pace re-sends and coalesce visibility changes. */
    private readonly clock: Clock,
  ) {
    this.batchedVisibility = new VisibilityBatches(sqs, url, clock);
  }

  async send(messages: readonly WorkMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await sendInBatches(
      this.sqs,
      await this.url(),
      messages.map((message, index) => ({
        Id: String(index),
        MessageBody: encodeWorkMessage(message),
        DelaySeconds: clamp(message.delaySeconds, 0, MAX_DELAY_SECONDS),
      })),
      this.clock,
    );
  }

  async hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    await changeVisibility(this.sqs, await this.url(), receiptHandle, seconds, signal);
  }

  hideBatched(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    return this.batchedVisibility.change(receiptHandle, seconds, signal);
  }
}

export class SqsScanQueue implements ScanQueue {
  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
    /** Whose timers pace re-sends. */
    private readonly clock: Clock,
  ) {}

  async send(requests: readonly ScanRequest[]): Promise<void> {
    if (requests.length === 0) return;
    await sendInBatches(
      this.sqs,
      await this.url(),
      requests.map((request, index) => ({ Id: String(index), MessageBody: encodeScanMessage(request.shard) })),
      this.clock,
    );
  }

  async hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    await changeVisibility(this.sqs, await this.url(), receiptHandle, seconds, signal);
  }
}

export type RejectedMessageKind = 'malformed-message' | 'unrunnable-message';

/** Dead-letter records go to the dead-letter queue, beside messages SQS redrove there. */
export class SqsDeadLetterSink implements DeadLetterSink {
  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
  ) {}

  async send(record: DeadLetterRecord): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({ QueueUrl: await this.url(), MessageBody: JSON.stringify({ kind: 'dead-slice', ...record }) }),
    );
  }

  /** A message cronfence could not read or run, kept for an operator. */
  async sendRejected(body: string, reason: string, queue: string, kind: RejectedMessageKind): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: await this.url(), MessageBody: JSON.stringify({ kind, queue, reason, body }) }));
  }
}

async function changeVisibility(sqs: SQSClient, url: string, receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  try {
    // An aborted signal ends the request and its retries: the SDK does not try an aborted request again.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: clamp(Math.ceil(seconds), 0, MAX_VISIBILITY_SECONDS),
      }),
      { abortSignal: signal },
    );
  } catch (error) {
    // Another consumer received the message since (our receipt handle is stale), or it is gone: it is theirs now.
    if (error instanceof ReceiptHandleIsInvalid || error instanceof MessageNotInflight) return;
    throw error;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(value)));
}
