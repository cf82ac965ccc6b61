/**
 * Capacity plan from the measured request mix (pure arithmetic):
 *
 * - Shards. The slices' and jobs' keys are spread (jobId, jobId+second,
 *   executionKey); the hot keys are the ones keyed by shard: the wheel table's
 *   partitions (the scanners' packed entries and cursor moves) and the sweep
 *   index (only slices that wait or that the reconciler found in trouble). A
 *   partition accepts 1,000 WCU/s, so at R slices/s each shard's partition
 *   sees R × units-per-slice / S; S must keep that under 1,000.
 * - A midnight burst of N slices. The scanner's part (advance) runs ahead of
 *   the second, from the first scan whose lookahead window holds it: one tick
 *   less than the lookahead L (up to an hour) before it; the workers' part
 *   (claim, commit) happens at the second. At a table throughput T WRU/s, the
 *   at-the-second part takes N × worker WRU / T seconds, and the scanner's part
 *   is done before the second only if N × scanner WRU / T ≤ L − tick. What the
 *   scanner could not do before the second it does after, beside the workers:
 *   the whole burst is committed (N × (scanner + worker WRU) − T × (L − tick)) / T
 *   seconds after the second, at the earliest, and the last slice has started by
 *   then. A slice created more than SQS's 900 s delay before its second
 *   surfaces early, and a worker hides it again until then (one more receive and
 *   visibility change, both shared by a batch of 10).
 */
import { MAX_LOOKAHEAD_MS } from '../../lib/core/advance-plan.ts';

export const PARTITION_WCU_PER_SECOND = 1000;
/** A new on-demand table serves this much at once (AWS documents 4,000 WRU/s and 12,000 RRU/s). */
export const ON_DEMAND_INITIAL_WRU_PER_SECOND = 4000;
/** A table's default on-demand maximum and the most warm throughput the construct can ask for without a quota raise. */
export const WARM_WRU_PER_SECOND = 40_000;
export const SQS_MAX_DELAY_SECONDS = 900;
/** The tick that queues every shard's scan. */
export const TICK_SECONDS = 60;
/** The longest lookahead whose messages all surface at their second (SQS's longest delay, plus the tick). */
export const DELAY_LOOKAHEAD_MS = (SQS_MAX_DELAY_SECONDS + TICK_SECONDS) * 1000;

export interface SliceWriteMix {
  /** Base-table WRU the scanner spends per slice (the advance transaction). */
  readonly scannerWru: number;
  /** Base-table WRU a worker spends per slice (claim, commit), heartbeats excluded. */
  readonly workerWru: number;
  /** Write units per slice on each shard-keyed partition: the wheel table ("wheel") and the sweep index ("slices/sweep"). */
  readonly shardKeyedWruPerSlice: Record<string, number>;
}

export interface ThroughputPlan {
  readonly tableWruPerSecond: number;
  /** The scanners' lookahead this plan assumes (CRONFENCE_LOOKAHEAD_MS, the construct's `lookahead`). */
  readonly lookaheadMs: number;
  /** Slices per second the table's write throughput allows (scanner and worker parts together). */
  readonly slicesPerSecond: number;
  /** Fewest shards that keep each shard-keyed index partition under 1,000 WCU/s at that rate. */
  readonly shardsNeeded: number;
  /** The shard-keyed table or index that decides it. */
  readonly hottestKey: string;
  readonly burstSlices: number;
  /** Seconds to claim and commit the whole burst once it is due (slices already enqueued). */
  readonly burstAtSecondSeconds: number;
  /** Seconds to create and enqueue the whole burst (the scanner's part). */
  readonly preEnqueueSeconds: number;
  /** Whether the scanner's part is done before the second: it fits the lookahead less one tick. */
  readonly preEnqueueFitsLookahead: boolean;
  /** Slices created more than 900 s before the second: their messages surface early and are hidden again once. */
  readonly earlySurfacingSlices: number;
  /** Seconds for everything when nothing was enqueued ahead. */
  readonly burstColdSeconds: number;
  /** Table WRU/s needed to pre-enqueue the whole burst within the lookahead (10% margin). */
  readonly wruPerSecondToPreEnqueue: number;
  /** Seconds after the second by which every slice has started and committed. */
  readonly allCommittedAfterSecondS: number;
  /** Table WRU/s that has every slice started and committed within 5 and 10 minutes of the second (same lookahead). */
  readonly wruPerSecondWithin: { readonly fiveMinutes: number; readonly tenMinutes: number };
}

export function planThroughput(
  mix: SliceWriteMix,
  tableWruPerSecond: number,
  burstSlices: number,
  lookaheadMs = DELAY_LOOKAHEAD_MS,
): ThroughputPlan {
  const perSlice = mix.scannerWru + mix.workerWru;
  const slicesPerSecond = perSlice > 0 ? tableWruPerSecond / perSlice : Number.POSITIVE_INFINITY;
  const [hottestKey, hottestUnits] = Object.entries(mix.shardKeyedWruPerSlice).sort(([, a], [, b]) => b - a)[0] ?? ['none', 0];
  const shardsNeeded = Math.max(1, Math.ceil((slicesPerSecond * hottestUnits) / PARTITION_WCU_PER_SECOND));
  const preEnqueueSeconds = (burstSlices * mix.scannerWru) / tableWruPerSecond;
  const leadS = leadSeconds(lookaheadMs);
  // The scan starts leadS before the second and creates slices at the table's rate; those made before the last 900 s surface early.
  const createdBeforeDelayWindow =
    mix.scannerWru > 0 ? (Math.max(0, leadS - SQS_MAX_DELAY_SECONDS) * tableWruPerSecond) / mix.scannerWru : burstSlices;
  return {
    tableWruPerSecond,
    lookaheadMs,
    slicesPerSecond: Math.round(slicesPerSecond),
    shardsNeeded,
    hottestKey,
    burstSlices,
    burstAtSecondSeconds: Math.round((burstSlices * mix.workerWru) / tableWruPerSecond),
    preEnqueueSeconds: Math.round(preEnqueueSeconds),
    preEnqueueFitsLookahead: preEnqueueSeconds <= leadS,
    earlySurfacingSlices: Math.round(Math.min(burstSlices, createdBeforeDelayWindow)),
    burstColdSeconds: Math.round((burstSlices * perSlice) / tableWruPerSecond),
    wruPerSecondToPreEnqueue: Math.ceil((burstSlices * mix.scannerWru) / (leadS * 0.9)),
    allCommittedAfterSecondS: Math.round(committedAfterSecondS(mix, tableWruPerSecond, burstSlices, leadS)),
    wruPerSecondWithin: {
      fiveMinutes: wruPerSecondWithin(mix, burstSlices, 300, leadS),
      tenMinutes: wruPerSecondWithin(mix, burstSlices, 600, leadS),
    },
  };
}

/** How long before a second the first scan whose window holds it runs: a tick less than the lookahead. */
function leadSeconds(lookaheadMs: number): number {
  return Math.max(0, lookaheadMs / 1000 - TICK_SECONDS);
}

/** Only the scanner's part runs before the second (at most `leadS` of it); the rest, and all of the workers', after. */
function committedAfterSecondS(mix: SliceWriteMix, tableWruPerSecond: number, burstSlices: number, leadS: number): number {
  const before = Math.min(burstSlices * mix.scannerWru, tableWruPerSecond * leadS);
  const after = burstSlices * (mix.scannerWru + mix.workerWru) - before;
  return Math.max((burstSlices * mix.workerWru) / tableWruPerSecond, after / tableWruPerSecond);
}

/** The least table WRU/s that commits the burst within `deadlineS` of its second, scanning from `leadS` before. */
function wruPerSecondWithin(mix: SliceWriteMix, burstSlices: number, deadlineS: number, leadS: number): number {
  const total = burstSlices * (mix.scannerWru + mix.workerWru);
  return Math.ceil(Math.max(total / (leadS + deadlineS), (burstSlices * mix.workerWru) / deadlineS));
}

/**
 * The shortest lookahead (whole minutes) that has the scanner's part of a
 * burst of `burstSlices` due in one second done before it: the scan takes
 * N × scanner WRU / T and starts a tick after the window first holds the
 * second. Undefined when not even the longest lookahead (an hour) fits.
 */
export function preEnqueueLookaheadMs(burstSlices: number, scannerWru: number, tableWruPerSecond: number): number | undefined {
  const scanS = (burstSlices * scannerWru) / tableWruPerSecond;
  const needed = Math.ceil((scanS + TICK_SECONDS) / 60) * 60_000;
  return needed <= MAX_LOOKAHEAD_MS ? needed : undefined;
}

/** The capacity plan in report.json: the burst's mix and the plans for it. */
export interface CapacityPlanReport {
  readonly mix: SliceWriteMix;
  readonly burstSlices: number;
  /** A new on-demand table, lookahead 16 minutes: the longest whose messages all surface at their second. */
  readonly initial: ThroughputPlan;
  /** A new on-demand table, with the lookahead that has the scanner's part done before the second (`preEnqueueLookaheadMs.initial`). */
  readonly initialPreCreated: ThroughputPlan;
  /** A table warmed to 40,000 WRU/s, lookahead 16 minutes. */
  readonly warm: ThroughputPlan;
  /** Lookahead that pre-enqueues the whole burst before its second; null when not even an hour does. */
  readonly preEnqueueLookaheadMs: { readonly initial: number | null; readonly warm: number | null };
}
