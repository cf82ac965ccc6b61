/**
 * The drill's schedule of process faults, drawn from the seed: the same seed,
 * duration and fault list give the same plan. Which busy replica a fault hits
 * is chosen when it fires (from the same random stream), since which worker
 * is busy depends on the run.
 */
import type { FaultKind } from './config.ts';
import { SeededRandom } from './random.ts';

export type ProcessFaultKind = Extract<FaultKind, 'kill' | 'pause' | 'scannerKill'>;

export interface PlannedFault {
  /** Milliseconds after the drill starts. */
  readonly atMs: number;
  readonly kind: ProcessFaultKind;
  /** For `pause`: how long the process stays stopped (always longer than the lease). */
  readonly pauseMs?: number;
}

export interface FaultPlanOptions {
  readonly seed: number;
  readonly durationMs: number;
  readonly faults: readonly FaultKind[];
  readonly leaseMs: number;
  /** Mean time between process faults. @default 6000 */
  readonly meanGapMs?: number;
}

const WARMUP_MS = 6000;
/** No process fault this close to the end, so every takeover can complete inside the drill. */
const QUIET_TAIL_MS = 8000;

export function planFaults(options: FaultPlanOptions): PlannedFault[] {
  const kinds = options.faults.filter((kind): kind is ProcessFaultKind => kind === 'kill' || kind === 'pause' || kind === 'scannerKill');
  if (kinds.length === 0) return [];
  const random = new SeededRandom(options.seed * 7919 + 17);
  const meanGap = options.meanGapMs ?? 6000;
  const plan: PlannedFault[] = [];
  for (
    let at = WARMUP_MS + random.int(0, meanGap);
    at < options.durationMs - QUIET_TAIL_MS;
    at += random.int(meanGap / 2, (meanGap * 3) / 2)
  ) {
    const kind = random.pick(kinds);
    plan.push(kind === 'pause' ? { atMs: at, kind, pauseMs: options.leaseMs + random.int(1000, 3000) } : { atMs: at, kind });
  }
  return plan;
}

/** A lifecycle change the drill parent makes: which job, and a draw that picks what to do from the job's state then. */
export interface PlannedChange {
  readonly atMs: number;
  /** Index into the drill's jobs. */
  readonly job: number;
  /** Uniform in [0, 1): picks the operation among those the job's state allows. */
  readonly choice: number;
}

export interface LifecyclePlanOptions {
  readonly seed: number;
  readonly durationMs: number;
  readonly jobCount: number;
  /** Jobs a change should hit half the time (the every-few-seconds ones: a change then meets pending slices). */
  readonly preferred: readonly number[];
  /** Mean time between changes. @default 2500 */
  readonly meanGapMs?: number;
}

/** No change this close to the end: the last one's new definition has occurrences left in the window. */
const LIFECYCLE_QUIET_TAIL_MS = 10_000;
const LIFECYCLE_WARMUP_MS = 5000;

export function planLifecycle(options: LifecyclePlanOptions): PlannedChange[] {
  if (options.jobCount === 0) return [];
  const random = new SeededRandom(options.seed * 104_729 + 3);
  const meanGap = options.meanGapMs ?? 2500;
  const plan: PlannedChange[] = [];
  for (
    let at = LIFECYCLE_WARMUP_MS + random.int(0, meanGap);
    at < options.durationMs - LIFECYCLE_QUIET_TAIL_MS;
    at += random.int(meanGap / 2, (meanGap * 3) / 2)
  ) {
    const job = options.preferred.length > 0 && random.chance(0.5) ? random.pick(options.preferred) : random.int(0, options.jobCount - 1);
    plan.push({ atMs: at, job, choice: random.next() });
  }
  return plan;
}
