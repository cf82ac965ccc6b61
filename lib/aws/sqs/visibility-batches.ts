/**
 * Visibility changes of one queue, coalesced (coalesced-entries.ts): the
 * changes asked for less than a quarter second apart go out as one
 * ChangeMessageVisibilityBatch. A Lambda batch of messages due in the same
 * second is claimed at once, so each claim's visibility change (the event
 * source leaves the queue's visibility at the function timeout) costs a tenth
 * of a request instead of one. While the changes wait, the messages keep the
 * queue's longer visibility, so no standby is admitted early; what it costs is
 * that much more before the handler starts.
 *
 * A stale receipt handle (another consumer received the message since) or a
 * message that is gone is not an error: the message is theirs now.
 */
import { ChangeMessageVisibilityBatchCommand, type BatchResultErrorEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../core/clock.ts';
import { CronfenceError } from '../../core/errors.ts';
import { CoalescedEntries } from './coalesced-entries.ts';

/** SQS caps a visibility timeout at 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;

interface PendingChange {
  readonly receiptHandle: string;
  readonly seconds: number;
  readonly signal?: AbortSignal;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A visibility change SQS refused for a reason other than the message having moved on. */
export class VisibilityChangeError extends CronfenceError {
  readonly code: string;
  constructor(entry: BatchResultErrorEntry) {
    super(`visibility change refused: ${entry.Code ?? 'unknown'}${entry.Message ? ` (${entry.Message})` : ''}`);
    this.code = entry.Code ?? 'unknown';
  }
}

export class VisibilityBatches {
  private readonly entries: CoalescedEntries<PendingChange>;

  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
    clock: Clock,
  ) {
    this.entries = new CoalescedEntries<PendingChange>((changes) => this.send(changes), clock);
  }

  /** Resolves once SQS applied the change (or the message had moved on); the lease starts only after it. */
  change(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) reject(signal.reason);
      else this.entries.add({ receiptHandle, seconds: clampSeconds(seconds), signal, resolve, reject });
    });
  }

  /**
   * Changes whose signal aborted while they waited are dropped; the request is abandoned when the first signal of the
   * rest aborts (its changes fail together, as one request does).
   */
  private async send(waiting: readonly PendingChange[]): Promise<void> {
    const changes = waiting.filter((change) => {
      if (change.signal?.aborted) change.reject(change.signal.reason);
      return change.signal?.aborted !== true;
    });
    if (changes.length === 0) return;
    const signals = changes.flatMap((change) => (change.signal ? [change.signal] : []));
    try {
      const result = await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: await this.url(),
          Entries: changes.map((change, index) => ({
            Id: String(index),
            ReceiptHandle: change.receiptHandle,
            VisibilityTimeout: change.seconds,
          })),
        }),
        { abortSignal: signals.length > 0 ? AbortSignal.any(signals) : undefined },
      );
      const failed = new Map((result.Failed ?? []).map((entry) => [entry.Id, entry]));
      changes.forEach((change, index) => {
        const entry = failed.get(String(index));
        if (entry === undefined || isMovedOn(entry)) change.resolve();
        else change.reject(new VisibilityChangeError(entry));
      });
    } catch (error) {
      for (const change of changes) change.reject(error);
    }
  }
}

/**
 * The receipt handle is stale or the message is no longer in flight. SQS (and
 * LocalStack) report a deleted message's handle in a batch as
 * InvalidParameterValue naming the ReceiptHandle ("Message does not exist or
 * is not available for visibility timeout change").
 */
function isMovedOn(entry: BatchResultErrorEntry): boolean {
  const code = entry.Code ?? '';
  return (
    /ReceiptHandleIsInvalid|MessageNotInflight/.test(code) ||
    (/InvalidParameterValue/.test(code) && /ReceiptHandle/.test(entry.Message ?? ''))
  );
}

function clampSeconds(seconds: number): number {
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.floor(Math.ceil(seconds))));
}
