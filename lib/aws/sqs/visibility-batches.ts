/**
 * Visibility changes of one queue, coalesced: the changes asked for less than a
 * quarter second apart go out as one ChangeMessageVisibilityBatch
 * (up to 10 entries, one billed request). A Lambda batch of messages due in
 * the same second is claimed at once, so each claim's visibility change (the
 * event source leaves the queue's visibility at the function timeout) costs a
 * tenth of a request instead of one.
 *
 * A stale receipt handle (another consumer received the message since) or a
 * message that is gone is not an error: the message is theirs now.
 */
import { ChangeMessageVisibilityBatchCommand, type BatchResultErrorEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { CronfenceError } from '../../core/errors.ts';

/** SQS caps a visibility timeout at 12 hours. */
export const MAX_VISIBILITY_SECONDS = 43_200;
/** Entries in one ChangeMessageVisibilityBatch. */
const MAX_ENTRIES = 10;
/**
 * How long the pending changes wait for one more after the last joined. The claims of one batch return over tens of
 * milliseconds from an idle table and over hundreds from a busy one (the emulator answers them one at a time, with
 * stalls of 200 ms: a fixed 50 ms window sent a 200-slice bench burst's changes about two to a request, 0.58 batch
 * requests per execution). While they wait the messages keep the queue's longer visibility, so no standby is admitted
 * early; what it costs is that much more before the handler starts.
 */
export const QUIET_MS = 250;
/** The longest the first change waits, however the others trickle in: the lease keeper starts only after it. */
export const MAX_WAIT_MS = 750;

interface PendingChange {
  readonly receiptHandle: string;
  readonly seconds: number;
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
  private pending: PendingChange[] = [];
  private quietTimer: NodeJS.Timeout | undefined;
  private maxWaitTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sqs: SQSClient,
    private readonly url: () => Promise<string>,
  ) {}

  change(receiptHandle: string, seconds: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ receiptHandle, seconds: clampSeconds(seconds), resolve, reject });
      if (this.pending.length >= MAX_ENTRIES) return this.flush();
      clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(() => this.flush(), QUIET_MS);
      this.maxWaitTimer ??= setTimeout(() => this.flush(), MAX_WAIT_MS);
    });
  }

  private flush(): void {
    clearTimeout(this.quietTimer);
    clearTimeout(this.maxWaitTimer);
    this.quietTimer = undefined;
    this.maxWaitTimer = undefined;
    while (this.pending.length > 0) void this.send(this.pending.splice(0, MAX_ENTRIES));
  }

  private async send(changes: readonly PendingChange[]): Promise<void> {
    try {
      const result = await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: await this.url(),
          Entries: changes.map((change, index) => ({ Id: String(index), ReceiptHandle: change.receiptHandle, VisibilityTimeout: change.seconds })),
        }),
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
  return /ReceiptHandleIsInvalid|MessageNotInflight/.test(code) || (/InvalidParameterValue/.test(code) && /ReceiptHandle/.test(entry.Message ?? ''));
}

function clampSeconds(seconds: number): number {
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.floor(Math.ceil(seconds))));
}
