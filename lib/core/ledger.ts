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
 * Is this ledger record the one a worker itself wrote? Used after an
 * ambiguous commit (the reply was lost): the same fence and owner means the
 * earlier attempt landed, and the retry must report success, not a new write.
 */
export function isOwnCommit(record: LedgerRecord | undefined, fence: number, owner: string): boolean {
  return record !== undefined && record.fence === fence && record.owner === owner;
}
