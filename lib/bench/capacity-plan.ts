/**
 * Capacity plan from the measured request mix (pure arithmetic):
 *
 * - Shards. Every base-table key here is spread (jobId, jobId+second,
 *   executionKey); the hot keys are the GSIs keyed by shard: the due index
 *   (dueShard) takes the scanner's advance writes, the sweep index
 *   (sweepShard) takes a slice's creation, claim and commit. A partition
 *   accepts 1,000 WCU/s, so at R slices/s each shard's index partition sees
 *   R × units-per-slice / S; S must keep that under 1,000.
 * - A midnight burst of N slices. The scanner's part (advance) can run ahead
 *   of the second, within SQS's 900 s delay (a 15-minute lookahead); the
 *   workers' part (claim, commit) happens at the second. At a table
 *   throughput T WRU/s, the at-the-second part takes N × worker WRU / T
 *   seconds, and pre-enqueueing all N fits in the delay window only if
 *   N × scanner WRU / T ≤ 900 s. What the scanner could not do before the
 *   second it does after, beside the workers: the whole burst is committed
 *   (N × (scanner + worker WRU) − T × 900 s) / T seconds after the second,
 *   at the earliest, and the last slice has started by then.
 */
export const PARTITION_WCU_PER_SECOND = 1000;
/** A new on-demand table serves this much at once (AWS documents 4,000 WRU/s and 12,000 RRU/s). */
export const ON_DEMAND_INITIAL_WRU_PER_SECOND = 4000;
/** A table's default on-demand maximum and the most warm throughput the construct can ask for without a quota raise. */
export const WARM_WRU_PER_SECOND = 40_000;
export const SQS_MAX_DELAY_SECONDS = 900;

export interface SliceWriteMix {
  /** Base-table WRU the scanner spends per slice (the advance transaction). */
  readonly scannerWru: number;
  /** Base-table WRU a worker spends per slice (claim, commit), heartbeats excluded. */
  readonly workerWru: number;
  /** GSI write units per slice on each shard-keyed index ("jobs/due", "slices/sweep"). */
  readonly indexWruPerSlice: Record<string, number>;
}

export interface ThroughputPlan {
  readonly tableWruPerSecond: number;
  /** Slices per second the table's write throughput allows (scanner and worker parts together). */
  readonly slicesPerSecond: number;
  /** Fewest shards that keep each shard-keyed index partition under 1,000 WCU/s at that rate. */
  readonly shardsNeeded: number;
  /** The index that decides it. */
  readonly hottestIndex: string;
  readonly burstSlices: number;
  /** Seconds to claim and commit the whole burst once it is due (slices already enqueued). */
  readonly burstAtSecondSeconds: number;
  /** Seconds to create and enqueue the whole burst (the scanner's part). */
  readonly preEnqueueSeconds: number;
  /** Whether the scanner's part fits in SQS's 900 s delay window before the second. */
  readonly preEnqueueFitsDelayWindow: boolean;
  /** Seconds for everything when nothing was enqueued ahead. */
  readonly burstColdSeconds: number;
  /** Table WRU/s needed to pre-enqueue the whole burst within the delay window (10% margin). */
  readonly wruPerSecondToPreEnqueue: number;
  /** Seconds after the second by which every slice has started and committed, scanning from 900 s before. */
  readonly allCommittedAfterSecondS: number;
  /** Table WRU/s that has every slice started and committed within 5 and 10 minutes of the second (same lead). */
  readonly wruPerSecondWithin: { readonly fiveMinutes: number; readonly tenMinutes: number };
}

export function planThroughput(mix: SliceWriteMix, tableWruPerSecond: number, burstSlices: number): ThroughputPlan {
  const perSlice = mix.scannerWru + mix.workerWru;
  const slicesPerSecond = perSlice > 0 ? tableWruPerSecond / perSlice : Number.POSITIVE_INFINITY;
  const [hottestIndex, hottestUnits] = Object.entries(mix.indexWruPerSlice).sort(([, a], [, b]) => b - a)[0] ?? ['none', 0];
  const shardsNeeded = Math.max(1, Math.ceil((slicesPerSecond * hottestUnits) / PARTITION_WCU_PER_SECOND));
  const preEnqueueSeconds = (burstSlices * mix.scannerWru) / tableWruPerSecond;
  return {
    tableWruPerSecond,
    slicesPerSecond: Math.round(slicesPerSecond),
    shardsNeeded,
    hottestIndex,
    burstSlices,
    burstAtSecondSeconds: Math.round((burstSlices * mix.workerWru) / tableWruPerSecond),
    preEnqueueSeconds: Math.round(preEnqueueSeconds),
    preEnqueueFitsDelayWindow: preEnqueueSeconds <= SQS_MAX_DELAY_SECONDS,
    burstColdSeconds: Math.round((burstSlices * perSlice) / tableWruPerSecond),
    wruPerSecondToPreEnqueue: Math.ceil((burstSlices * mix.scannerWru) / (SQS_MAX_DELAY_SECONDS * 0.9)),
    allCommittedAfterSecondS: Math.round(committedAfterSecondS(mix, tableWruPerSecond, burstSlices)),
    wruPerSecondWithin: { fiveMinutes: wruPerSecondWithin(mix, burstSlices, 300), tenMinutes: wruPerSecondWithin(mix, burstSlices, 600) },
  };
}

/** Only the scanner's part runs before the second (at most 900 s of it); the rest, and all of the workers', after. */
function committedAfterSecondS(mix: SliceWriteMix, tableWruPerSecond: number, burstSlices: number): number {
  const before = Math.min(burstSlices * mix.scannerWru, tableWruPerSecond * SQS_MAX_DELAY_SECONDS);
  const after = burstSlices * (mix.scannerWru + mix.workerWru) - before;
  return Math.max((burstSlices * mix.workerWru) / tableWruPerSecond, after / tableWruPerSecond);
}

/** The least table WRU/s that commits the burst within `deadlineS` of its second, scanning from 900 s before. */
function wruPerSecondWithin(mix: SliceWriteMix, burstSlices: number, deadlineS: number): number {
  const total = burstSlices * (mix.scannerWru + mix.workerWru);
  return Math.ceil(Math.max(total / (SQS_MAX_DELAY_SECONDS + deadlineS), (burstSlices * mix.workerWru) / deadlineS));
}

/**
 * The lookahead a scan needs to pre-enqueue `burstSlices` due in one second:
 * the scanner's part must finish before the second, and no message may be
 * delayed beyond 900 s. Undefined when no lookahead fits (raise throughput).
 */
export function preEnqueueLookaheadMs(burstSlices: number, scannerWru: number, tableWruPerSecond: number, tickMs = 60_000): number | undefined {
  const scanMs = ((burstSlices * scannerWru) / tableWruPerSecond) * 1000;
  const needed = Math.ceil((scanMs + tickMs) / 1000) * 1000;
  return needed <= SQS_MAX_DELAY_SECONDS * 1000 ? needed : undefined;
}
