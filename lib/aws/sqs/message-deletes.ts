/**
 * Deletes of one queue's received messages, coalesced (coalesced-entries.ts):
 * the deletes asked for less than a quarter second apart go out as one
 * DeleteMessageBatch. A delete that fails is reported, not retried: the
 * message surfaces again and its next receiver finds its slice settled (or
 * rescans its shard), so a lost delete costs a receive, never a second effect.
 */
import { DeleteMessageBatchCommand, type BatchResultErrorEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../core/clock.ts';
import { CronfenceError } from '../../core/errors.ts';
import { CoalescedEntries } from './coalesced-entries.ts';

/** A delete SQS refused (reported; the message comes back and is settled again). */
export class MessageDeleteError extends CronfenceError {
  override name = 'MessageDeleteError';
  readonly code: string;
  constructor(entry: BatchResultErrorEntry) {
    super(`delete refused: ${entry.Code ?? 'unknown'}${entry.Message ? ` (${entry.Message})` : ''}`);
    this.code = entry.Code ?? 'unknown';
  }
}

export class MessageDeletes {
  private readonly entries: CoalescedEntries<string>;

  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
    private readonly onError: (error: unknown) => void,
    clock: Clock,
  ) {
    this.entries = new CoalescedEntries<string>((receiptHandles) => this.send(receiptHandles), clock);
  }

  delete(receiptHandle: string): void {
    this.entries.add(receiptHandle);
  }

  /** Sends what is pending, and resolves once every delete sent has returned. */
  settle(): Promise<void> {
    return this.entries.settle();
  }

  /** Drops the deletes not sent yet (someone else deletes those), and resolves once every delete sent has returned. */
  discardPending(): Promise<void> {
    return this.entries.discard();
  }

  private async send(receiptHandles: readonly string[]): Promise<void> {
    try {
      const result = await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: await this.url(),
          Entries: receiptHandles.map((receiptHandle, index) => ({ Id: String(index), ReceiptHandle: receiptHandle })),
        }),
      );
      for (const failed of result.Failed ?? []) this.onError(new MessageDeleteError(failed));
    } catch (error) {
      this.onError(error);
    }
  }
}
