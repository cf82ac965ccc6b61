/**
 * The per-slice rules of the audit behind `cronfence verify` (core/audit.ts
 * runs them over a whole history): is a live slice overdue, does a final
 * slice agree with its ledger record. Pure.
 */
import { isoSecond, parseExecutionKey } from './execution-key.ts';
import type { LedgerOutcome, LedgerRecord } from './ledger.ts';
import { startAtOf } from './jitter.ts';
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
  | 'skipped_without_reason'
  /** A slot that ran another handler or payload than its generation's definition (core/audit-identity.ts). */
  | 'wrong_definition'
  /** A slot that ran at an instant that is not an occurrence of its job, nor an operator's trigger on record. */
  | 'not_an_occurrence'
  /** The dead-man's switch: an active job with no final slot within k of its intervals (core/dead-man.ts). */
  | 'stale'
  /** A job the engine cannot plan: its stored schedule or time zone does not parse. */
  | 'set_aside'
  /** A stored job or slice item that does not parse: named, and the rest is checked without it. */
  | 'unreadable_row';

export const VIOLATION_KINDS: readonly ViolationKind[] = [
  'double_commit',
  'outcome_mismatch',
  'ledger_without_slice',
  'missing',
  'stuck',
  'skipped_without_reason',
  'wrong_definition',
  'not_an_occurrence',
  'stale',
  'set_aside',
  'unreadable_row',
];

/** A stored item that could not be read as what its table holds (lib/aws/dynamo/stored-rows.ts). */
export interface UnreadableRow {
  readonly table: 'jobs' | 'slices';
  /** The job id (jobs), or the execution key (slices), as far as the item has one. */
  readonly key: string;
  readonly jobId: string;
  /** The slice's scheduled time, when the item has a numeric one. */
  readonly scheduledAt?: number;
  readonly reason: string;
}

export interface Finding {
  readonly kind: ViolationKind;
  readonly detail: string;
}

/** A finding about one execution key. */
export interface Located extends Finding {
  readonly executionKey: string;
  readonly jobId: string;
  readonly scheduledAt: number;
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
      return startAtOf(slice);
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

/** A business write stamped with the execution key and fence of the commit that made it. */
export interface BusinessEffect {
  readonly executionKey: string;
  readonly fence: number;
  /** Where it was found (a table name). */
  readonly source: string;
}

/**
 * Do the business writes on record agree with the commit on record? They are
 * written in the commit's transaction, so writes from two fences mean two
 * commits landed (the ledger keeps only one: an unconditioned second commit
 * overwrites it), and writes from a fence other than the ledger's mean the
 * commit on record is not the one that wrote them.
 */
export function effectFindings(records: readonly LedgerRecord[], effects: readonly BusinessEffect[]): Finding[] {
  if (effects.length === 0) return [];
  const fences = [...new Set(effects.map((effect) => effect.fence))].sort((a, b) => a - b);
  const where = [...new Set(effects.map((effect) => effect.source))].join(', ');
  if (fences.length > 1) return [{ kind: 'double_commit', detail: `business writes from fences ${fences.join(' and ')} in ${where}` }];
  const committed = records.find((record) => record.outcome === 'SUCCEEDED');
  if (committed === undefined)
    return [{ kind: 'outcome_mismatch', detail: `business writes of fence ${fences[0]} in ${where} but no SUCCEEDED ledger record` }];
  if (committed.fence === fences[0]) return [];
  return [
    {
      kind: 'double_commit',
      detail: `business writes of fence ${fences[0]} in ${where} but the commit on record is fence ${committed.fence}`,
    },
  ];
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
    findings.push({
      kind: 'outcome_mismatch',
      detail: `${matching.length} ${outcome} ledger records: ${matching.map(describeRecord).join('; ')}`,
    });
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

/**
 * Every finding about stored records, key by key: each slice (its own state,
 * its ledger records, its business writes), each ledger record without a
 * slice, each business write with neither.
 */
export function recordFindings(
  slices: ReadonlyMap<string, Slice>,
  ledger: ReadonlyMap<string, readonly LedgerRecord[]>,
  effects: ReadonlyMap<string, readonly BusinessEffect[]>,
  now: number,
  graceMs: number,
): Located[] {
  const out: Located[] = [];
  const at = (key: string, jobId: string, scheduledAt: number, findings: readonly (Finding | undefined)[]): void => {
    for (const finding of findings) if (finding) out.push({ ...finding, executionKey: key, jobId, scheduledAt });
  };
  for (const [key, slice] of slices) {
    const records = ledger.get(key) ?? [];
    at(key, slice.jobId, slice.scheduledAt, [
      skipFinding(slice),
      stuckFinding(slice, now, graceMs),
      ...ledgerFindings(slice, records),
      ...effectFindings(records, effects.get(key) ?? []),
    ]);
  }
  for (const [key, records] of ledger) {
    const first = records[0];
    if (slices.has(key) || first === undefined) continue;
    at(key, first.jobId, first.scheduledAt, [...ledgerFindings(undefined, records), ...effectFindings(records, effects.get(key) ?? [])]);
  }
  for (const [key, written] of effects) {
    const parsed = parseExecutionKey(key);
    if (slices.has(key) || ledger.has(key) || parsed === undefined) continue;
    const fences = [...new Set(written.map((effect) => effect.fence))].join(' and ');
    const where = [...new Set(written.map((effect) => effect.source))].join(', ');
    at(key, parsed.jobId, parsed.scheduledAt, [
      { kind: 'outcome_mismatch', detail: `business writes of fence ${fences} in ${where} but no slice and no ledger record` },
    ]);
  }
  return out;
}
