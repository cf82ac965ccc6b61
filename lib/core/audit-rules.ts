/**
 * The per-slice rules of the audit behind `cronfence verify` (core/audit.ts
 * runs them over a whole history): is a live slice overdue, does a final
 * slice agree with its ledger record. Pure.
 */
import { isoSecond } from './execution-key.ts';
import type { LedgerOutcome, LedgerRecord } from './ledger.ts';
import { SliceStatus, type Slice } from './slice.ts';

export type ViolationKind =
  /** Two SUCCEEDED ledger records for one key, or a commit on record that is not the slice's last claim's. */
  | 'double_commit'
  /** The slice's final state and the ledger disagree (SUCCEEDED vs DEAD, one without the other). */
  | 'outcome_mismatch'
  /** A ledger record whose slice is not in the store. */
  | 'ledger_without_slice'
  /** An expected occurrence the current definition never turned into a final slice, nor a live one. */
  | 'missing'
  /** A live slice (ENQUEUED, RUNNING, FAILED) past its due time plus the grace: nothing is moving it. */
  | 'stuck'
  /** SKIPPED with no reason on record. */
  | 'skipped_without_reason';

export const VIOLATION_KINDS: readonly ViolationKind[] = [
  'double_commit',
  'outcome_mismatch',
  'ledger_without_slice',
  'missing',
  'stuck',
  'skipped_without_reason',
];

export interface Finding {
  readonly kind: ViolationKind;
  readonly detail: string;
}

/**
 * Since when a live slice has been waiting for someone to move it; undefined
 * for a final one. ENQUEUED waits from its second, FAILED from its retry's
 * due time, RUNNING from the end of its lease (a holder that keeps renewing
 * keeps pushing it out, so a slow handler is not stuck).
 */
export function waitingSince(slice: Slice): number | undefined {
  switch (slice.status) {
    case SliceStatus.Enqueued:
      return slice.scheduledAt;
    case SliceStatus.Failed:
      return slice.nextAttemptAt ?? slice.scheduledAt;
    case SliceStatus.Running:
      return slice.leaseExpiresAt ?? slice.startedAt ?? slice.scheduledAt;
    default:
      return undefined;
  }
}

/** A live slice nothing has moved for longer than the grace. */
export function stuckFinding(slice: Slice, now: number, graceMs: number): Finding | undefined {
  const since = waitingSince(slice);
  if (since === undefined || since + graceMs >= now) return undefined;
  const ago = `${Math.round((now - since) / 1000)} s ago`;
  const what =
    slice.status === SliceStatus.Enqueued
      ? `ENQUEUED and never claimed; due ${ago}`
      : slice.status === SliceStatus.Failed
        ? `FAILED after attempt ${slice.attempts}; its retry was due ${ago}`
        : `RUNNING (fence ${slice.fence}, ${slice.owner ?? 'no owner'}); its lease ended ${ago}`;
  return { kind: 'stuck', detail: `${what} (generation ${slice.generation})` };
}

export function skipFinding(slice: Slice): Finding | undefined {
  if (slice.status !== SliceStatus.Skipped || (slice.skipReason ?? '') !== '') return undefined;
  return { kind: 'skipped_without_reason', detail: `SKIPPED (generation ${slice.generation}) with no skipReason` };
}

/**
 * Does the slice agree with its ledger records? Written together in one
 * transaction, so any disagreement is a broken commit path:
 * - SUCCEEDED: exactly one SUCCEEDED record, with the slice's fence and owner
 *   (another fence means a commit landed that was not the last claim's: a
 *   zombie's, so the slice was committed by two holders);
 * - DEAD: exactly one DEAD record, with the slice's fence and owner;
 * - any other state: no record at all.
 */
export function ledgerFindings(slice: Slice | undefined, records: readonly LedgerRecord[]): Finding[] {
  if (slice === undefined) {
    return records.map((record) => ({ kind: 'ledger_without_slice', detail: `${describeRecord(record)} and no slice in the store` }));
  }
  const succeeded = records.filter((record) => record.outcome === 'SUCCEEDED');
  if (succeeded.length > 1) {
    return [{ kind: 'double_commit', detail: `${succeeded.length} SUCCEEDED ledger records: ${succeeded.map(describeRecord).join('; ')}` }];
  }
  if (slice.status === SliceStatus.Succeeded || slice.status === SliceStatus.Dead) return finalFindings(slice, slice.status, records);
  if (records.length === 0) return [];
  return [{ kind: 'outcome_mismatch', detail: `slice is ${slice.status} but the ledger has ${records.map(describeRecord).join('; ')}` }];
}

function finalFindings(slice: Slice, outcome: LedgerOutcome, records: readonly LedgerRecord[]): Finding[] {
  const matching = records.filter((record) => record.outcome === outcome);
  const other = records.filter((record) => record.outcome !== outcome);
  const findings: Finding[] = [];
  if (other.length > 0) {
    findings.push({ kind: 'outcome_mismatch', detail: `slice is ${outcome} but the ledger has ${other.map(describeRecord).join('; ')}` });
  } else if (matching.length === 0) {
    findings.push({ kind: 'outcome_mismatch', detail: `slice is ${outcome} (fence ${slice.fence}) with no ledger record` });
  }
  if (matching.length > 1) {
    findings.push({ kind: 'outcome_mismatch', detail: `${matching.length} ${outcome} ledger records: ${matching.map(describeRecord).join('; ')}` });
  }
  for (const record of matching) {
    if (record.fence === slice.fence && record.owner === slice.owner) continue;
    const detail = `ledger ${outcome} by fence ${record.fence} (${record.owner}) but the slice's last claim is fence ${slice.fence} (${slice.owner ?? 'no owner'})`;
    // A commit by a holder that was not the last one: the last one ran too, so the slice was committed twice.
    findings.push({ kind: outcome === 'SUCCEEDED' ? 'double_commit' : 'outcome_mismatch', detail });
  }
  return findings;
}

function describeRecord(record: LedgerRecord): string {
  return `${record.outcome} record (fence ${record.fence}, ${record.owner}, committed ${isoSecond(record.committedAt)})`;
}
