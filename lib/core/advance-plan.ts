/**
 * The scanner's per-job window math, pure: which occurrences one scan turns
 * into slices, where the job's `nextFireAt` moves to, and what is reported
 * missed. The scanner only does the I/O around it.
 *
 * Invariant: `nextFireAt` is the first occurrence not yet turned into a
 * slice. An occurrence left out because of `limit` is the returned
 * `nextFireAt`, and the next plan from there includes it (the schedule's
 * occurrences do not depend on where a query starts: schedule.ts).
 *
 * After downtime, from the oldest occurrence not yet sliced:
 *   ──MISSED range──┬──── catch-up window ─────────────┬── lookahead ──▶
 *   older than the  │ already due (before `now`)       │ not yet due
 *   window: one     │ misfire `all`: run each          │ run each
 *   MISSED record   │ `latest`: run the latest only    │
 *                   │ `none`: run none                 │
 * Under `latest` and `none` the due occurrences not run become one SKIPPED
 * record for their range, reason `misfire`. The policy applies only when the
 * job is really late: its oldest due occurrence is more than
 * {@link MISFIRE_THRESHOLD_MS} old (a scan a few seconds late is not downtime).
 */
import type { MisfirePolicy } from './job-spec.ts';
import { countOccurrences, nextOccurrenceAtOrAfter, occurrencesBetween, type Schedule } from './schedule.ts';

/**
 * The farthest ahead a scan may create slices (CRONFENCE_LOOKAHEAD_MS). Past SQS's 900 s delay a message surfaces
 * early and the worker hides it again until its second (one more receive and visibility change); an hour lets a
 * million-slice midnight be created before it on a new table, and bounds what a pause or an update must settle.
 */
export const MAX_LOOKAHEAD_MS = 3_600_000;
/** `nextFireAt` of a job that never fires again. */
export const NEVER = Number.MAX_SAFE_INTEGER;
/** Missed occurrences are counted up to this many (a week-long outage of a per-second job is 604,800). */
export const MISSED_COUNT_CAP = 100_000;
/** A job whose oldest due occurrence is older than this at a scan has misfired (Quartz's misfireThreshold, 60 s). */
export const MISFIRE_THRESHOLD_MS = 60_000;

export interface AdvancePlanInput {
  readonly schedule: Schedule;
  /** The job's stored first occurrence not yet turned into a slice. */
  readonly nextFireAt: number;
  readonly now: number;
  /** Slices are created for occurrences before `now + lookaheadMs`. */
  readonly lookaheadMs: number;
  /** Occurrences older than `now - catchUpWindowMs` are reported missed, not run. */
  readonly catchUpWindowMs: number;
  /** Most slices one advance may create. */
  readonly limit: number;
  /** Which due occurrences run after downtime. @default 'all' */
  readonly misfire?: MisfirePolicy;
}

export interface MissedRange {
  /** Occurrences missed, at most {@link MISSED_COUNT_CAP}. */
  readonly count: number;
  /** The first missed occurrence. */
  readonly from: number;
  /** Where the catch-up window starts (exclusive end of the missed range). */
  readonly to: number;
}

/** Occurrences inside the catch-up window the misfire policy does not run: one SKIPPED record. */
export interface SkippedRange extends MissedRange {
  readonly reason: 'misfire';
}

export interface AdvancePlan {
  /** Ascending, at most `limit`, in `[max(nextFireAt, now - catchUpWindowMs), now + lookaheadMs)`. */
  readonly occurrences: number[];
  /** The first occurrence not in `occurrences` (at or after the last one), or {@link NEVER}. */
  readonly nextFireAt: number;
  readonly missed: MissedRange | undefined;
  /** Due occurrences the misfire policy does not run (they come before `occurrences`). */
  readonly skipped: SkippedRange | undefined;
}

export function planAdvance(input: AdvancePlanInput): AdvancePlan {
  const { schedule, now } = input;
  const catchUpFrom = now - input.catchUpWindowMs;
  const windowEnd = now + input.lookaheadMs;
  const dueFrom = Math.max(input.nextFireAt, catchUpFrom);
  const missed = pastCatchUpWindow(input.nextFireAt, now, input.catchUpWindowMs)
    ? missedRange(schedule, input.nextFireAt, catchUpFrom)
    : undefined;
  const { skipped, runFrom: from } = applyMisfire(schedule, input.misfire ?? 'all', dueFrom, now);
  // One more than the limit: the first one left out is where the job resumes.
  const found = occurrencesBetween(schedule, from, windowEnd, input.limit + 1);
  const occurrences = found.slice(0, input.limit);
  const nextFireAt = found[input.limit] ?? nextOccurrenceAtOrAfter(schedule, Math.max(from, windowEnd)) ?? NEVER;
  return { occurrences, nextFireAt, missed, skipped };
}

/** Where the run starts under the misfire policy, and the range it skips to get there. */
function applyMisfire(
  schedule: Schedule,
  policy: MisfirePolicy,
  dueFrom: number,
  now: number,
): { skipped: SkippedRange | undefined; runFrom: number } {
  if (policy === 'all') return { skipped: undefined, runFrom: dueFrom };
  const oldest = nextOccurrenceAtOrAfter(schedule, dueFrom);
  if (oldest === undefined || !hasMisfired(oldest, now)) return { skipped: undefined, runFrom: dueFrom };
  const runFrom = (policy === 'latest' ? lastOccurrenceBefore(schedule, oldest, now) : undefined) ?? now;
  const range = missedRange(schedule, oldest, runFrom);
  return { skipped: range && { ...range, reason: 'misfire' }, runFrom };
}

/** Is an occurrence due at `dueAt` older than the catch-up window at `now` (run no more: MISSED)? */
function pastCatchUpWindow(dueAt: number, now: number, catchUpWindowMs: number): boolean {
  return dueAt < now - catchUpWindowMs;
}

/** Is a job whose oldest due occurrence is `oldestDueAt` really late at `now` (its misfire policy applies)? */
function hasMisfired(oldestDueAt: number, now: number): boolean {
  return oldestDueAt < now - MISFIRE_THRESHOLD_MS;
}

/**
 * How late a claim may come, after its start, and still not be judged by the
 * catch-up window: the clocks of the scanner that sent it and the worker that
 * claims it may be this far apart (core/slice.ts, LEASE_EXPIRY_MARGIN_MS), so a
 * job with a window of 0 still runs an occurrence claimed on time.
 */
export const LATE_CLAIM_TOLERANCE_MS = 4000;

export interface LateClaimInput {
  readonly schedule: Schedule;
  /** The slot's nominal second. */
  readonly scheduledAt: number;
  /** When it was meant to start: its second plus the job's jitter offset (jitter.ts). */
  readonly startAt: number;
  /** The claimer's clock at the claim. */
  readonly now: number;
  readonly catchUpWindowMs: number;
  readonly misfire?: MisfirePolicy;
}

/**
 * What a first start claimed late becomes, by the rule a scan applies to the
 * occurrences it has not sent yet (the same two tests, measured from the
 * start): older than the catch-up window, `missed` (MISSED); inside it but
 * really late (more than {@link MISFIRE_THRESHOLD_MS}), `misfire` (SKIPPED with
 * reason `misfire`) under `none`, and under `latest` when a later occurrence
 * is already due (it runs, this one does not). Undefined: it runs.
 */
export function lateClaim(input: LateClaimInput): 'missed' | 'misfire' | undefined {
  const { schedule, scheduledAt, startAt, now } = input;
  if (pastCatchUpWindow(startAt, now, Math.max(input.catchUpWindowMs, LATE_CLAIM_TOLERANCE_MS))) return 'missed';
  if (!hasMisfired(startAt, now)) return undefined;
  const policy = input.misfire ?? 'all';
  if (policy === 'none') return 'misfire';
  if (policy === 'all') return undefined;
  const next = nextOccurrenceAtOrAfter(schedule, scheduledAt + 1);
  return next !== undefined && next + (startAt - scheduledAt) <= now ? 'misfire' : undefined;
}

/** The last occurrence in `[fromMs, toMs)`, looked for backwards from `toMs` in doubling spans. */
function lastOccurrenceBefore(schedule: Schedule, fromMs: number, toMs: number): number | undefined {
  for (let spanMs = 60_000; ; spanMs *= 2) {
    const start = Math.max(fromMs, toMs - spanMs);
    const found = occurrencesBetween(schedule, start, toMs, MISSED_COUNT_CAP);
    if ((found.length > 0 && found.length < MISSED_COUNT_CAP) || start === fromMs) return found.at(-1);
  }
}

function missedRange(schedule: Schedule, fromMs: number, toMs: number): MissedRange | undefined {
  const first = nextOccurrenceAtOrAfter(schedule, fromMs);
  if (first === undefined || first >= toMs) return undefined;
  return { count: countOccurrences(schedule, first, toMs, MISSED_COUNT_CAP), from: first, to: toMs };
}
