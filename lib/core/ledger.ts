/**
 * The ledger: the record of how an execution ended, one per execution key.
 * It lives on the slice item itself (status SUCCEEDED or DEAD with the fence
 * and owner of the claim that ended it, `finishedAt` and `lastError`): a
 * commit is one conditional write of that item, and the uniqueness of the
 * slice key (jobId + scheduledAt) is the "exactly once". A final slice never
 * goes back to a live status and never expires (DynamoDB TTL applies to
 * SKIPPED and MISSED records only), so the record is permanent.
 */
import { executionKey } from './execution-key.ts';
import { SliceStatus, type Slice } from './slice.ts';

export type LedgerOutcome = 'SUCCEEDED' | 'DEAD';

export interface LedgerRecord {
  readonly executionKey: string;
  readonly jobId: string;
  readonly scheduledAt: number;
  readonly fence: number;
  readonly owner: string;
  readonly committedAt: number;
  readonly outcome: LedgerOutcome;
  /** For DEAD: the last error. */
  readonly error?: string;
}

/** The ledger record a final slice carries; undefined for a slice that has not ended in SUCCEEDED or DEAD. */
export function ledgerRecordOf(slice: Slice | undefined): LedgerRecord | undefined {
  if (slice === undefined || (slice.status !== SliceStatus.Succeeded && slice.status !== SliceStatus.Dead)) return undefined;
  return {
    executionKey: executionKey(slice.jobId, slice.scheduledAt),
    jobId: slice.jobId,
    scheduledAt: slice.scheduledAt,
    fence: slice.fence,
    owner: slice.owner ?? '',
    committedAt: slice.finishedAt ?? slice.scheduledAt,
    outcome: slice.status === SliceStatus.Succeeded ? 'SUCCEEDED' : 'DEAD',
    error: slice.lastError,
  };
}

/** The ledger records a list of slices carries, in the same order. */
export function ledgerOfSlices(slices: readonly Slice[]): LedgerRecord[] {
  return slices.flatMap((slice) => ledgerRecordOf(slice) ?? []);
}

/**
 * Is this ledger record the one a worker itself wrote, with this outcome?
 * Used after an ambiguous write (the reply was lost): the same fence, owner
 * and outcome mean the earlier try landed, and the retry must report
 * success, not a new write. The same claim with the other outcome on record
 * is not success: a DEAD never reads as committed, nor a commit as DEAD.
 */
export function isOwnCommit(record: LedgerRecord | undefined, fence: number, owner: string, outcome: LedgerOutcome): boolean {
  return isOwnClaim(record, fence, owner) && record.outcome === outcome;
}

/** Was this ledger record written under this claim (whatever its outcome)? */
export function isOwnClaim(record: LedgerRecord | undefined, fence: number, owner: string): record is LedgerRecord {
  return record !== undefined && record.fence === fence && record.owner === owner;
}
