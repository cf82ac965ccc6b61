/**
 * The scanner's per-job window math, pure: which occurrences one scan turns
 * into slices, where the job's `nextFireAt` moves to, and what is reported
 * missed. The scanner only does the I/O around it.
 *
 * Invariant: `nextFireAt` is the first occurrence not yet turned into a
 * slice. An occurrence left out because of `limit` is the returned
 * `nextFireAt`, and the next plan from there includes it (the schedule's
 * occurrences do not depend on where a query starts: schedule.ts).
 */
import { countOccurrences, nextOccurrenceAtOrAfter, occurrencesBetween, type Schedule } from './schedule.ts';

/** `nextFireAt` of a job that never fires again. */
export const NEVER = Number.MAX_SAFE_INTEGER;
/** Missed occurrences are counted up to this many (a week-long outage of a per-second job is 604,800). */
export const MISSED_COUNT_CAP = 100_000;

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
}

export interface MissedRange {
  /** Occurrences missed, at most {@link MISSED_COUNT_CAP}. */
  readonly count: number;
  /** The first missed occurrence. */
  readonly from: number;
  /** Where the catch-up window starts (exclusive end of the missed range). */
  readonly to: number;
}

export interface AdvancePlan {
  /** Ascending, at most `limit`, in `[max(nextFireAt, now - catchUpWindowMs), now + lookaheadMs)`. */
  readonly occurrences: number[];
  /** The first occurrence not in `occurrences` (at or after the last one), or {@link NEVER}. */
  readonly nextFireAt: number;
  readonly missed: MissedRange | undefined;
}

export function planAdvance(input: AdvancePlanInput): AdvancePlan {
  const { schedule, now } = input;
  const catchUpFrom = now - input.catchUpWindowMs;
  const windowEnd = now + input.lookaheadMs;
  const from = Math.max(input.nextFireAt, catchUpFrom);
  const missed = input.nextFireAt < catchUpFrom ? missedRange(schedule, input.nextFireAt, catchUpFrom) : undefined;
  // One more than the limit: the first one left out is where the job resumes.
  const found = occurrencesBetween(schedule, from, windowEnd, input.limit + 1);
  const occurrences = found.slice(0, input.limit);
  const nextFireAt = found[input.limit] ?? nextOccurrenceAtOrAfter(schedule, Math.max(from, windowEnd)) ?? NEVER;
  return { occurrences, nextFireAt, missed };
}

function missedRange(schedule: Schedule, fromMs: number, toMs: number): MissedRange | undefined {
  const first = nextOccurrenceAtOrAfter(schedule, fromMs);
  if (first === undefined || first >= toMs) return undefined;
  return { count: countOccurrences(schedule, first, toMs, MISSED_COUNT_CAP), from: first, to: toMs };
}
