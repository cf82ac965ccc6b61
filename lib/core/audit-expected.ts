/**
 * The expectedness half of the audit behind `cronfence verify`: which
 * occurrences each enabled job's current definition should have run, and
 * what the store holds for each. Pure.
 *
 * A job's window is [max(since, updatedAt), min(until, now - grace)):
 * updatedAt is when the current generation took effect, and the stores keep
 * no earlier definition, so older slices are only checked for finality.
 */
import { waitingSince, type Located } from './audit-rules.ts';
import { executionKey } from './execution-key.ts';
import { activeSince, isActiveAt } from './job-lifecycle.ts';
import { isTombstone, type JobRecord, type StoredJob } from './job-record.ts';
import { occurrencesBetween, scheduleOf } from './schedule.ts';
import { isFinal, SliceStatus, type Slice } from './slice.ts';

export type FinalStatus = 'SUCCEEDED' | 'DEAD' | 'SKIPPED' | 'MISSED';

export interface ExpectedCounts {
  occurrences: number;
  /** Expected occurrences by final status. */
  final: Record<FinalStatus, number>;
  /** Live and not overdue: a retry backing off, a lease still renewed. */
  pending: number;
  stuck: number;
  missing: number;
}

export interface JobWindow {
  readonly from: number;
  readonly until: number;
  readonly count: number;
  readonly capped: boolean;
}

export interface ExpectedResult {
  readonly counts: ExpectedCounts;
  readonly windows: Map<string, JobWindow>;
  readonly capped: string[];
  readonly notes: string[];
  readonly missing: Located[];
  /** Jobs whose stored schedule does not parse: the engine cannot plan them. */
  readonly setAside: Located[];
}

export interface ExpectedRequest {
  readonly since: number;
  /** min(until, now - grace) */
  readonly expectedUntil: number;
  readonly now: number;
  readonly graceMs: number;
  readonly cap: number;
}

export function checkExpected(jobs: readonly JobRecord[], slices: ReadonlyMap<string, Slice>, request: ExpectedRequest): ExpectedResult {
  const counts: ExpectedCounts = {
    occurrences: 0,
    final: { SUCCEEDED: 0, DEAD: 0, SKIPPED: 0, MISSED: 0 },
    pending: 0,
    stuck: 0,
    missing: 0,
  };
  const result: ExpectedResult = { counts, windows: new Map(), capped: [], notes: [], missing: [], setAside: [] };
  const missedRanges = missedRangesByJob(slices);
  for (const job of jobs) {
    // A pause with an end that has passed runs again: expected from its end on.
    if (isTombstone(job) || !isActiveAt(job, request.now)) continue;
    const from = Math.max(request.since, activeSince(job));
    let occurrences: number[];
    try {
      occurrences = occurrencesBetween(scheduleOf(job), from, request.expectedUntil, request.cap + 1);
    } catch (error) {
      const detail = `schedule ${JSON.stringify(job.schedule)} in ${job.timeZone} does not parse (${(error as Error).message}): the engine cannot plan this job; its occurrences were not checked`;
      result.setAside.push({ kind: 'set_aside', detail, executionKey: `job ${job.id}`, jobId: job.id, scheduledAt: request.now });
      continue;
    }
    const capped = occurrences.length > request.cap;
    if (capped) result.capped.push(job.id);
    result.windows.set(job.id, {
      from,
      until: Math.max(from, request.expectedUntil),
      count: Math.min(request.cap, occurrences.length),
      capped,
    });
    for (const at of occurrences.slice(0, request.cap)) {
      const key = executionKey(job.id, at);
      const range = recordedRangeAt(missedRanges.get(job.id), job.generation, at);
      const state: OccurrenceState = range
        ? { kind: 'final', status: range.status as FinalStatus }
        : occurrenceState(job, slices.get(key), request.now, request.graceMs);
      counts.occurrences++;
      if (state.kind === 'final') counts.final[state.status]++;
      else counts[state.kind]++;
      if (state.kind === 'missing')
        result.missing.push({ kind: 'missing', detail: state.detail, executionKey: key, jobId: job.id, scheduledAt: at });
    }
  }
  return result;
}

/** MISSED (outage) and SKIPPED (misfire policy) items that stand for a range (`missedUntil`), by job. */
function missedRangesByJob(slices: ReadonlyMap<string, Slice>): Map<string, Slice[]> {
  const ranges = new Map<string, Slice[]>();
  for (const slice of slices.values()) {
    if ((slice.status !== SliceStatus.Missed && slice.status !== SliceStatus.Skipped) || slice.missedUntil === undefined) continue;
    ranges.set(slice.jobId, [...(ranges.get(slice.jobId) ?? []), slice]);
  }
  return ranges;
}

/** The current generation's range record covering `at` (MISSED or SKIPPED): final, not missing (its own slot has no slice). */
function recordedRangeAt(ranges: readonly Slice[] | undefined, generation: number, at: number): Slice | undefined {
  return (ranges ?? []).find((range) => range.generation === generation && range.scheduledAt <= at && at < (range.missedUntil ?? 0));
}

type OccurrenceState =
  | { readonly kind: 'final'; readonly status: FinalStatus }
  | { readonly kind: 'pending' | 'stuck' }
  | { readonly kind: 'missing'; readonly detail: string };

/**
 * An expected occurrence of the current definition. An older generation's
 * SKIPPED slice does not count: the scanner re-creates such an instant for
 * the new generation, so finding it still skipped means the current
 * definition never ran it. (A live slice past the grace is flagged stuck by
 * the per-slice check, once.)
 */
function occurrenceState(job: StoredJob, slice: Slice | undefined, now: number, graceMs: number): OccurrenceState {
  if (slice === undefined)
    return { kind: 'missing', detail: `no slice for this occurrence of ${JSON.stringify(job.schedule)} (${job.timeZone})` };
  if (slice.status === SliceStatus.Skipped && slice.generation < job.generation) {
    return {
      kind: 'missing',
      detail: `only generation ${slice.generation}'s slice, SKIPPED (${slice.skipReason ?? 'no reason'}); generation ${job.generation} never ran it`,
    };
  }
  if (isFinal(slice.status)) return { kind: 'final', status: slice.status as FinalStatus };
  return (waitingSince(slice) ?? now) + graceMs < now ? { kind: 'stuck' } : { kind: 'pending' };
}
