/**
 * The local poller as its handler's event source (lib/lambda/event-source.ts), given to the runtime through
 * `decoratePorts`. Unlike Lambda's, it knows since when SQS has hidden each record it received (`hiddenSince` in
 * sqs-poller.ts): the worker's held message judges from it whether the message could surface under a live holder. And
 * it deletes a record as soon as the handler settles it `delete`, not when its batch ends: locally a record's
 * visibility is the lease's, so a record done early in a slow batch would surface and be received again
 * (test/integration/poller-early-delete.test.ts). The deletes of records settled less than a quarter second apart
 * share a DeleteMessageBatch (message-deletes.ts).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../core/clock.ts';
import { MessageDeletes } from '../aws/sqs/message-deletes.ts';
import type { BatchDeletes, SqsEventSource } from '../lambda/event-source.ts';

export class PolledRecords implements SqsEventSource {
  private readonly deletes: MessageDeletes;
  /** The records of batches in flight: since when each message has been hidden. */
  private readonly hidden = new Map<string, number>();
  private readonly deleted = new Set<string>();

  constructor(sqs: SQSClient, queueUrl: () => Promise<string>, onError: (error: unknown) => void, clock: Clock) {
    this.deletes = new MessageDeletes(sqs, queueUrl, onError, clock);
  }

  /** A batch received: its messages hidden since `hiddenSince`, at the earliest. */
  received(receiptHandles: readonly string[], hiddenSince: number): void {
    for (const receiptHandle of receiptHandles) this.hidden.set(receiptHandle, hiddenSince);
  }

  hiddenSince(receiptHandle: string): number | undefined {
    return this.hidden.get(receiptHandle);
  }

  /** Deletes a record's message once, whether the handler settled it early or its batch ended. */
  delete(receiptHandle: string): void {
    if (this.deleted.has(receiptHandle)) return;
    this.deleted.add(receiptHandle);
    this.deletes.delete(receiptHandle);
  }

  /** The poller deletes what is left as the batch ends: nothing waits for the handler's end. */
  batchDeletes(): BatchDeletes {
    return { delete: (receiptHandle) => this.delete(receiptHandle), end: async () => {} };
  }

  /** A batch ended: its records are forgotten. */
  ended(receiptHandles: readonly string[]): void {
    for (const receiptHandle of receiptHandles) {
      this.hidden.delete(receiptHandle);
      this.deleted.delete(receiptHandle);
    }
  }

  /** Sends what is pending, and resolves once every delete sent has returned. */
  settle(): Promise<void> {
    return this.deletes.settle();
  }
}
