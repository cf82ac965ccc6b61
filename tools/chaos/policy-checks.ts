/**
 * What the drill's schedule-policy jobs (policy-jobs.ts) must end with,
 * checked from the stores alone. Pure. The per-occurrence verdict (history.ts)
 * already counts an occurrence covered by a SKIPPED `misfire` range as
 * skipped by policy, not missed, for a job whose policy skips; this checks
 * that each policy skipped exactly what it says and ran the rest:
 * - `all`: no misfire range; every occurrence of the outage ran;
 * - `latest`: one range from the first occurrence of the outage up to (not
 *   including) the latest one due at the first scan, which ran; that is at or
 *   after the last occurrence before the outage was set up (no scan came earlier);
 * - `none`: one range from the first occurrence of the outage to the first
 *   scan (not before the outage was set up), of which nothing ran;
 * and that no other job has a misfire range; a one-time job ran once and is
 * then kept, never to fire again, or deleted, as its policy says; and that
 * under `skip` and `bufferOne` no run started while a committed run of its
 * job was still going, unless the two claims came within the clock skew the
 * policy's ordering tolerates (overlap-policy.ts) or the committed one's
 * worker was paused meanwhile (its lease lapsed: the next one may go ahead).
 */
import { NEVER, nextOccurrenceOf } from '../../lib/core/job-lifecycle.ts';
import { isTombstone, type JobRecord } from '../../lib/core/job-record.ts';
import type { MisfirePolicy } from '../../lib/core/job-spec.ts';
import { MAX_CLOCK_SKEW_MS, SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import type { OverlapPolicy } from '../../lib/core/job-spec.ts';
import type { Enumerate } from './expected.ts';
import { eventTime, groupBy, type InjectedProcessFault, type ObservedEvent } from './observed.ts';
import type { JobDefinition } from './job-history.ts';

export interface OutageJob {
  readonly jobId: string;
  readonly misfire: MisfirePolicy;
  readonly definition: JobDefinition;
  /** The first occurrence the simulated outage left unscanned. */
  readonly outageFrom: number;
  /** When the outage was set up (drill clock): no scan can have advanced the job over it before. */
  readonly simulatedAt: number;
}

/** A scanner's clock may run this far behind the drill's (the skew fault, within the promised ±2 s). */
const SCANNER_SKEW_MS = MAX_CLOCK_SKEW_MS;

export interface PolicyCheckInput {
  readonly slices: readonly Slice[];
  readonly outages: readonly OutageJob[];
  /** The drill window's start: the outage's occurrences are those before it. */
  readonly startedAt: number;
  readonly enumerate: Enumerate;
  /** The one-time jobs as the store holds them at the end, by their `afterOneTime`. */
  readonly oneTime: readonly {
    readonly jobId: string;
    readonly afterOneTime: 'complete' | 'delete';
    readonly record: JobRecord | undefined;
  }[];
}

const ran = (slice: Slice | undefined): boolean => slice?.status === SliceStatus.Succeeded || slice?.status === SliceStatus.Dead;

export function checkPolicies(input: PolicyCheckInput): string[] {
  const problems: string[] = [];
  const outageIds = new Set(input.outages.map((outage) => outage.jobId));
  const misfireRanges = input.slices.filter(
    (slice) => slice.status === SliceStatus.Skipped && slice.skipReason === 'misfire' && slice.missedUntil !== undefined,
  );
  for (const range of misfireRanges) {
    if (!outageIds.has(range.jobId))
      problems.push(`${range.jobId}: a misfire range at ${isoSecond(range.scheduledAt)} on a job that had no outage`);
  }
  for (const outage of input.outages)
    problems.push(
      ...checkOutage(
        outage,
        input,
        misfireRanges.filter((range) => range.jobId === outage.jobId),
      ),
    );
  for (const job of input.oneTime) problems.push(...checkOneTime(job, input.slices));
  return problems;
}

function checkOutage(outage: OutageJob, input: PolicyCheckInput, ranges: readonly Slice[]): string[] {
  const { jobId, misfire } = outage;
  const slices = new Map(input.slices.filter((slice) => slice.jobId === jobId).map((slice) => [slice.scheduledAt, slice]));
  const outageOccurrences = input.enumerate(outage.definition, outage.outageFrom, input.startedAt);
  if (misfire === 'all') {
    const notRun = outageOccurrences.filter((at) => !ran(slices.get(at)));
    return [
      ...(ranges.length > 0 ? [`${jobId} (misfire all): ${ranges.length} misfire ranges; expected none`] : []),
      ...(notRun.length > 0
        ? [`${jobId} (misfire all): ${notRun.length} occurrences of the outage did not run, first ${isoSecond(notRun[0] as number)}`]
        : []),
    ];
  }
  const [range, ...extra] = ranges;
  if (range === undefined || extra.length > 0)
    return [`${jobId} (misfire ${misfire}): ${ranges.length} misfire ranges; expected exactly one`];
  const until = range.missedUntil ?? range.scheduledAt;
  const problems: string[] = [];
  if (range.scheduledAt !== outage.outageFrom)
    problems.push(
      `${jobId} (misfire ${misfire}): the range starts at ${isoSecond(range.scheduledAt)}, not at the outage's first occurrence ${isoSecond(outage.outageFrom)}`,
    );
  const covered = input.enumerate(outage.definition, range.scheduledAt, until);
  if (range.missedCount !== covered.length)
    problems.push(`${jobId} (misfire ${misfire}): the range counts ${range.missedCount} occurrences; it covers ${covered.length}`);
  const ranInRange = covered.filter((at) => at !== range.scheduledAt && ran(slices.get(at)));
  if (ranInRange.length > 0) problems.push(`${jobId} (misfire ${misfire}): ${ranInRange.length} occurrences inside the skipped range ran`);
  // The first scan's instant by its own clock (up to the skew behind), as the range records it: its whole second.
  const firstScanFrom = Math.floor((outage.simulatedAt - SCANNER_SKEW_MS) / 1000) * 1000;
  if (misfire === 'latest') {
    const lastOfOutage = input.enumerate(outage.definition, outage.outageFrom, firstScanFrom).at(-1) ?? outage.outageFrom;
    if (until < lastOfOutage)
      problems.push(
        `${jobId} (misfire latest): the range ends at ${isoSecond(until)}, before the outage's last occurrence ${isoSecond(lastOfOutage)}`,
      );
    if (!ran(slices.get(until))) problems.push(`${jobId} (misfire latest): the latest due occurrence ${isoSecond(until)} did not run`);
  } else if (until < firstScanFrom) {
    problems.push(
      `${jobId} (misfire none): the range ends at ${isoSecond(until)}, before the outage was set up (${isoSecond(outage.simulatedAt)})`,
    );
  }
  return problems;
}

function checkOneTime(job: PolicyCheckInput['oneTime'][number], slices: readonly Slice[]): string[] {
  const own = slices.filter((slice) => slice.jobId === job.jobId);
  const problems =
    own.length === 1 && ran(own[0])
      ? []
      : [`${job.jobId}: ${own.length} slices (${own.map((slice) => slice.status).join(', ')}); expected one that ran`];
  if (job.afterOneTime === 'delete' && !isTombstone(job.record))
    problems.push(`${job.jobId}: still stored after its run; afterOneTime is delete`);
  const slotAt = own[0]?.scheduledAt ?? 0;
  if (
    job.afterOneTime === 'complete' &&
    (isTombstone(job.record) || job.record === undefined || nextOccurrenceOf(job.record, slotAt + 1000) !== NEVER)
  ) {
    problems.push(`${job.jobId}: not kept as completed (never firing again) after its run`);
  }
  return problems;
}

/** Two claims closer than this (two clocks each ±2 s off) may be ordered either way by the claimers. */
const CLAIM_ORDER_TOLERANCE_MS = 2 * MAX_CLOCK_SKEW_MS;
/**
 * A run's `committed` event comes after its commit's reply; the write landed up to a reply's time before, and a
 * newer occurrence's gate may already have read it final (seen on LocalStack: a start 40 ms before the event).
 */
const COMMIT_REPLY_TOLERANCE_MS = 500;

export interface OverlapRunsInput {
  readonly events: readonly ObservedEvent[];
  readonly processFaults: readonly InjectedProcessFault[];
  readonly overlapOf: ReadonlyMap<string, OverlapPolicy>;
}

/** Runs of `skip` and `bufferOne` jobs that started while a committed run of the same job was going. */
export function checkOverlapRuns(input: OverlapRunsInput): string[] {
  const problems: string[] = [];
  const byJob = groupBy(input.events, (observed) => observed.event.jobId);
  for (const [jobId, policy] of input.overlapOf) {
    if (policy !== 'skip' && policy !== 'bufferOne') continue;
    const events = byJob.get(jobId) ?? [];
    const at = (type: string, key: string, fence: number): number | undefined => {
      const found = events.find(
        (observed) => observed.event.type === type && observed.event.executionKey === key && observed.event.fence === fence,
      );
      return found && eventTime(found);
    };
    const runs = events
      .filter((observed) => observed.event.type === 'committed')
      .flatMap((observed) => {
        const { executionKey: key, fence } = observed.event;
        const start = at('started', key, fence);
        const claim = at('claimed', key, fence);
        return start === undefined || claim === undefined
          ? []
          : [{ key, start, claim, end: eventTime(observed), replica: observed.replica }];
      });
    for (const started of events.filter((observed) => observed.event.type === 'started')) {
      const key = started.event.executionKey;
      const start = eventTime(started);
      const claim = at('claimed', key, started.event.fence) ?? start;
      const overlapped = runs.find(
        (run) =>
          run.key !== key &&
          run.start < start &&
          start < run.end - COMMIT_REPLY_TOLERANCE_MS &&
          claim > run.claim + CLAIM_ORDER_TOLERANCE_MS &&
          !pausedDuring(input.processFaults, run),
      );
      if (overlapped) problems.push(`${jobId} (overlap ${policy}): ${key} started while ${overlapped.key} was still running`);
    }
  }
  return problems;
}

function pausedDuring(faults: readonly InjectedProcessFault[], run: { replica: string; start: number; end: number }): boolean {
  return faults.some(
    (fault) =>
      fault.kind === 'pause' &&
      fault.replica === run.replica &&
      fault.at < run.end &&
      (fault.until ?? Number.POSITIVE_INFINITY) > run.start,
  );
}
