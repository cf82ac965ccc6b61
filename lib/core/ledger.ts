/**
 * The ledger: one immutable record per execution key, written with
 * `attribute_not_exists` in the same transaction as the slice's final state,
 * never updated. Its uniqueness is the "exactly once" in cronfence.
 */
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
