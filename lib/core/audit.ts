/**
 * The audit behind `cronfence verify`: what an installation's stores hold
 * (jobs and tombstones, slices, ledger records), checked against the
 * invariants. Pure: lib/aws/dynamo/audit-reader.ts loads the history, this
 * judges it, and only from stored state (no process's own report).
 *
 * - Every slice: a SKIPPED one has a reason; a live one is not stuck (past
 *   its due time, retry or lease end by more than the grace); a final one
 *   agrees with its ledger record and with the business writes on record,
 *   when those are read (core/audit-rules.ts).
 * - Every ledger record has its slice.
 * - Every occurrence of every enabled job's current definition in
 *   [max(since, job.updatedAt), min(until, now - grace)) has its slice,
 *   final or still legitimately live. The stores keep no earlier
 *   definitions, so slices from before the last change (older generations,
 *   paused or deleted jobs) are checked for finality, not expectedness
 *   (core/audit-expected.ts).
 */
import { checkExpected, type ExpectedCounts, type JobWindow } from './audit-expected.ts';
import { identityFindings } from './audit-identity.ts';
import {
  recordFindings,
  VIOLATION_KINDS,
  type BusinessEffect,
  type Located,
  type UnreadableRow,
  type ViolationKind,
} from './audit-rules.ts';
import type { StaleJob } from './dead-man.ts';
import { isSetAsideNow, type SetAsideJob } from './set-aside.ts';
import { executionKey, isoSecond } from './execution-key.ts';
import { startAtOf } from './jitter.ts';
import { activeSince, isActiveAt } from './job-lifecycle.ts';
import { isTombstone, type JobRecord } from './job-record.ts';
import type { LedgerRecord } from './ledger.ts';
import { SliceStatus, type Slice } from './slice.ts';
import { distribution } from './stats.ts';

export { VIOLATION_KINDS, type BusinessEffect, type UnreadableRow, type ViolationKind } from './audit-rules.ts';
export type { ExpectedCounts, FinalStatus } from './audit-expected.ts';

export const AUDIT_DEFAULTS = {
  /** Slack for a live slice before it counts as stuck, and for the newest occurrences. */
  graceMs: 120_000,
  /** A start later than this after its second is listed as late. */
  lateThresholdMs: 1000,
  /** Occurrences enumerated per job at most; the report says when a job hit it. */
  occurrenceCap: 100_000,
} as const;

export interface AuditInput {
  /** Jobs, tombstones included. */
  readonly jobs: readonly JobRecord[];
  /** Slices scheduled in [since, until), of every job (deleted ones too). */
  readonly slices: readonly Slice[];
  /** Ledger records scheduled in [since, until). */
  readonly ledger: readonly LedgerRecord[];
  /** Business writes stamped with execution key and fence, of slices in [since, until) (optional: `--effects`). */
  readonly effects?: readonly BusinessEffect[];
  readonly now: number;
  readonly since: number;
  readonly until: number;
  /** @default AUDIT_DEFAULTS.graceMs */
  readonly graceMs?: number;
  /** @default AUDIT_DEFAULTS.lateThresholdMs */
  readonly lateThresholdMs?: number;
  /** @default AUDIT_DEFAULTS.occurrenceCap */
  readonly occurrenceCap?: number;
  /** Jobs the dead-man's switch found silent: each is a violation. */
  readonly stale?: readonly StaleJob[];
  /** Stored items that did not parse: each is a violation, and the rest is checked without it. */
  readonly unreadable?: readonly UnreadableRow[];
  /**
   * The scans' set-aside records (`WheelStore.setAsideJobs`): a record of the
   * job's current generation is a violation; one of an older generation is
   * history (a change since, a repair, gave the job a new generation).
   */
  readonly setAside?: readonly SetAsideJob[];
}

/** pass: every check held; violations: at least one did not; nothing-checked: no occurrence was expected (say why). */
export type AuditOutcome = 'pass' | 'violations' | 'nothing-checked';

/** Exit code of each outcome (2 is the CLI's: it could not check). */
export const OUTCOME_EXIT_CODES = { pass: 0, violations: 1, 'nothing-checked': 3 } as const;

export interface AuditViolation {
  readonly kind: ViolationKind;
  readonly executionKey: string;
  readonly jobId: string;
  /** ISO 8601 UTC, second precision. */
  readonly scheduledAt: string;
  readonly detail: string;
}

export interface SlotTiming {
  readonly executionKey: string;
  readonly status: string;
  /** Start lag of the last claim: startedAt minus its intended start (the second plus the job's jitter), 0 when claimed ahead. */
  readonly lagMs: number;
  readonly attempts: number;
}

export type JobState = 'enabled' | 'paused' | 'deleted' | 'unknown';

export interface JobAudit {
  readonly jobId: string;
  /** unknown: slices or ledger records but no job item, not even a tombstone. */
  readonly state: JobState;
  readonly generation?: number;
  /** The current definition's expected window (enabled jobs only); ISO times. */
  readonly expectedFrom?: string;
  readonly expectedUntil?: string;
  readonly expected: number;
  /** True when the enumeration stopped at the cap: later occurrences were not checked. */
  readonly capped: boolean;
  readonly slices: number;
  readonly violations: number;
}

export interface AuditReport {
  readonly window: {
    readonly now: string;
    readonly since: string;
    readonly until: string;
    readonly expectedUntil: string;
    readonly graceMs: number;
  };
  readonly jobs: Record<JobState, number> & { readonly checked: number };
  readonly expected: ExpectedCounts;
  /** Every slice read, by status. */
  readonly slices: { readonly total: number; readonly byStatus: Record<string, number> };
  readonly ledgerRecords: number;
  /** Business writes read (`--effects`). */
  readonly effects: number;
  readonly perJob: JobAudit[];
  /** Job ids whose enumeration hit the occurrence cap. */
  readonly capped: string[];
  readonly occurrenceCap: number;
  /** Jobs that could not be checked (say why). */
  readonly notes: string[];
  readonly violationCounts: Record<ViolationKind, number>;
  readonly violations: AuditViolation[];
  /** MISSED slices (final by an explicit misfire policy), listed. */
  readonly missed: string[];
  /** Starts later than the threshold, latest first. */
  readonly lateSlots: SlotTiming[];
  readonly lateThresholdMs: number;
  /** Start lag over slices claimed once (a retried slice's startedAt is its last claim). Null when none started. */
  readonly startLag: {
    readonly count: number;
    readonly p50Ms: number | null;
    readonly p99Ms: number | null;
    readonly maxMs: number | null;
  };
  readonly outcome: AuditOutcome;
  /** nothing-checked: why no occurrence was expected (a young installation, no active job, a window with none due). */
  readonly nothingChecked?: string;
  /** OUTCOME_EXIT_CODES[outcome]: 0 pass, 1 on any violation, 3 when nothing was expected. */
  readonly exitCode: 0 | 1 | 3;
}

export function auditHistory(input: AuditInput): AuditReport {
  const graceMs = input.graceMs ?? AUDIT_DEFAULTS.graceMs;
  const cap = input.occurrenceCap ?? AUDIT_DEFAULTS.occurrenceCap;
  const lateThresholdMs = input.lateThresholdMs ?? AUDIT_DEFAULTS.lateThresholdMs;
  const expectedUntil = Math.min(input.until, input.now - graceMs);
  const slices = new Map(input.slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice]));
  const ledger = groupBy(input.ledger, (record) => record.executionKey);
  const effects = groupBy(input.effects ?? [], (effect) => effect.executionKey);
  const expected = checkExpected(input.jobs, slices, { since: input.since, expectedUntil, now: input.now, graceMs, cap });
  const violations = merged([
    ...recordFindings(slices, ledger, effects, input.now, graceMs),
    ...expected.missing,
    ...expected.setAside,
    ...identityFindings(input.jobs, slices),
    ...(input.stale ?? []).map(staleFinding),
    ...(input.unreadable ?? []).map((row) => unreadableFinding(row, input.now)),
    ...setAsideFindings(input.jobs, input.setAside ?? []),
  ]);
  const outcome: AuditOutcome = violations.length > 0 ? 'violations' : expected.counts.occurrences === 0 ? 'nothing-checked' : 'pass';
  const { lateSlots, startLag } = timings([...slices.values()], lateThresholdMs);
  return {
    window: {
      now: new Date(input.now).toISOString(),
      since: new Date(input.since).toISOString(),
      until: new Date(input.until).toISOString(),
      expectedUntil: new Date(Math.max(input.since, expectedUntil)).toISOString(),
      graceMs,
    },
    jobs: jobCounts(input.jobs, slices, ledger),
    expected: expected.counts,
    slices: { total: slices.size, byStatus: countBy([...slices.values()], (slice) => slice.status) },
    ledgerRecords: input.ledger.length,
    effects: input.effects?.length ?? 0,
    perJob: perJob(input.jobs, slices, ledger, expected.windows, violations),
    capped: expected.capped,
    occurrenceCap: cap,
    notes: expected.notes,
    violationCounts: Object.fromEntries(VIOLATION_KINDS.map((kind) => [kind, violations.filter((v) => v.kind === kind).length])) as Record<
      ViolationKind,
      number
    >,
    violations,
    missed: [...slices].filter(([, slice]) => slice.status === SliceStatus.Missed).map(([key]) => key),
    lateSlots,
    lateThresholdMs,
    startLag,
    outcome,
    ...(outcome === 'nothing-checked' && {
      nothingChecked: whyNothingExpected(input.jobs, input.since, expectedUntil, graceMs, slices.size),
    }),
    exitCode: OUTCOME_EXIT_CODES[outcome],
  };
}

function staleFinding(job: StaleJob): Located {
  const last = job.lastFinalAt === undefined ? 'none since it became active' : isoSecond(job.lastFinalAt);
  return {
    kind: 'stale',
    executionKey: executionKey(job.jobId, job.overdueAt),
    jobId: job.jobId,
    scheduledAt: job.overdueAt,
    detail: `no final slot since ${new Date(job.silentSince).toISOString()} (last final slot: ${last}); this occurrence was due final by ${new Date(job.deadline).toISOString()} (dead-man's switch, interval ${Math.round(job.intervalMs / 1000)} s)`,
  };
}

/** Jobs a scan set aside in the generation they still have (or whose row cannot be read at all), with the scan's reason. */
function setAsideFindings(jobs: readonly JobRecord[], records: readonly SetAsideJob[]): Located[] {
  const byId = new Map(jobs.map((job) => [job.id, job]));
  return records
    .filter((record) => isSetAsideNow(record, byId.get(record.jobId)))
    .map((record) => ({
      kind: 'set_aside',
      executionKey: `job ${record.jobId}`,
      jobId: record.jobId,
      scheduledAt: record.from,
      detail: `set aside in generation ${record.generation} by ${record.by} at ${new Date(record.at).toISOString()}: ${record.reason}; its occurrences from ${isoSecond(record.from)} on were not sent`,
    }));
}

function unreadableFinding(row: UnreadableRow, now: number): Located {
  const name = row.table === 'slices' ? row.key : `job ${row.jobId}`;
  return {
    kind: 'unreadable_row',
    executionKey: name,
    jobId: row.jobId,
    scheduledAt: row.scheduledAt ?? now,
    detail: `${row.table} item ${row.key}: ${row.reason}; not checked`,
  };
}

/** Why no occurrence was expected: the audit checked no schedule, and says so rather than pass. */
function whyNothingExpected(jobs: readonly JobRecord[], since: number, expectedUntil: number, graceMs: number, slices: number): string {
  const active = jobs.filter((job) => !isTombstone(job) && isActiveAt(job, expectedUntil + graceMs));
  const read = `${slices} slices read were checked for finality only`;
  if (active.length === 0) return `no active job (${jobs.length} paused or deleted): no occurrence was expected; ${read}`;
  const youngest = Math.min(...active.map((job) => activeSince(job as Exclude<JobRecord, { deleted: true }>)));
  if (youngest >= expectedUntil) {
    return `every active job became active after ${new Date(expectedUntil).toISOString()} (now minus the grace of ${Math.round(graceMs / 1000)} s): the installation, or its jobs' last change, is younger than the grace, so no occurrence is expected yet; check again after ${new Date(youngest + graceMs).toISOString()} and a first occurrence; ${read}`;
  }
  return `no active job had an occurrence due between ${new Date(since).toISOString()} and ${new Date(expectedUntil).toISOString()}; widen --since to reach one; ${read}`;
}

/** One violation per kind and key (a double commit seen in the ledger and in the business writes is one), oldest first. */
function merged(findings: readonly Located[]): AuditViolation[] {
  const byId = new Map<string, AuditViolation>();
  for (const finding of findings) {
    const id = `${finding.kind} ${finding.executionKey}`;
    const earlier = byId.get(id);
    byId.set(id, {
      kind: finding.kind,
      executionKey: finding.executionKey,
      jobId: finding.jobId,
      scheduledAt: isoSecond(finding.scheduledAt),
      detail: earlier ? `${earlier.detail}; ${finding.detail}` : finding.detail,
    });
  }
  return [...byId.values()].sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt) || a.executionKey.localeCompare(b.executionKey));
}

function timings(slices: readonly Slice[], thresholdMs: number): Pick<AuditReport, 'lateSlots' | 'startLag'> {
  const started = slices
    .filter((slice) => slice.startedAt !== undefined)
    .map((slice) => ({
      executionKey: executionKey(slice.jobId, slice.scheduledAt),
      status: slice.status,
      // From its intended start: a jittered slot is claimed at its jittered time by design (jitter.ts).
      lagMs: Math.max(0, (slice.startedAt as number) - startAtOf(slice)),
      attempts: slice.attempts,
    }));
  const lag = distribution(started.filter((slot) => slot.attempts <= 1).map((slot) => slot.lagMs));
  const orNull = (value: number): number | null => (Number.isNaN(value) ? null : value);
  return {
    lateSlots: started.filter((slot) => slot.lagMs > thresholdMs).sort((a, b) => b.lagMs - a.lagMs),
    startLag: { count: lag.count, p50Ms: orNull(lag.p50), p99Ms: orNull(lag.p99), maxMs: orNull(lag.max) },
  };
}

function jobStates(
  jobs: readonly JobRecord[],
  slices: Map<string, Slice>,
  ledger: Map<string, LedgerRecord[]>,
): Map<string, { state: JobState; generation?: number }> {
  const states = new Map<string, { state: JobState; generation?: number }>();
  for (const job of jobs)
    states.set(job.id, { state: isTombstone(job) ? 'deleted' : job.enabled ? 'enabled' : 'paused', generation: job.generation });
  for (const slice of slices.values()) if (!states.has(slice.jobId)) states.set(slice.jobId, { state: 'unknown' });
  for (const [record] of ledger.values()) if (record && !states.has(record.jobId)) states.set(record.jobId, { state: 'unknown' });
  return states;
}

function jobCounts(jobs: readonly JobRecord[], slices: Map<string, Slice>, ledger: Map<string, LedgerRecord[]>): AuditReport['jobs'] {
  const states = [...jobStates(jobs, slices, ledger).values()];
  const count = (state: JobState): number => states.filter((entry) => entry.state === state).length;
  return {
    checked: states.length,
    enabled: count('enabled'),
    paused: count('paused'),
    deleted: count('deleted'),
    unknown: count('unknown'),
  };
}

function perJob(
  jobs: readonly JobRecord[],
  slices: Map<string, Slice>,
  ledger: Map<string, LedgerRecord[]>,
  windows: ReadonlyMap<string, JobWindow>,
  violations: readonly AuditViolation[],
): JobAudit[] {
  const slicesOf = countBy([...slices.values()], (slice) => slice.jobId);
  const violationsOf = countBy(violations, (violation) => violation.jobId);
  return [...jobStates(jobs, slices, ledger)]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([jobId, { state, generation }]) => {
      const window = windows.get(jobId);
      return {
        jobId,
        state,
        generation,
        expectedFrom: window ? new Date(window.from).toISOString() : undefined,
        expectedUntil: window ? new Date(window.until).toISOString() : undefined,
        expected: window?.count ?? 0,
        capped: window?.capped ?? false,
        slices: slicesOf[jobId] ?? 0,
        violations: violationsOf[jobId] ?? 0,
      };
    });
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(keyOf(item));
    if (group) group.push(item);
    else groups.set(keyOf(item), [item]);
  }
  return groups;
}

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}
