/**
 * Sparse: slices that arrive one at a time, as the seed's 25,000 schedules a
 * day do (one every 3.5 s), scaled to the bench's time: N daily jobs, each due
 * in its own second, one second apart, so each worker receive (what an event
 * source mapping invokes a Lambda with) gets one message. Run by the burst's
 * fleet, with its Lambda-path visibility, before the burst.
 *
 * The scans tick every 2.5 s with the bench's 10 s lookahead (a deployment's
 * minute tick and 2-minute lookahead, scaled), so every message is sent ahead
 * and surfaces in the second before its slice, as in a deployment. Each shard
 * scan makes a fixed part of requests whatever it finds (its cursor's claim
 * and move, the reconciler's queries): compressing a day into a minute would
 * multiply that part per slice, so it is measured apart, on idle ticks after
 * the run, taken out of the scanner's share, and reported per shard scan
 * (docs/bench.md: a deployment's ticks are not per execution); of its SQS
 * requests only the sends are per slice.
 *
 * Waits: handler start minus the processing start of its message (the
 * `claimed` event's time minus its `claimMs`): what a Lambda invocation holding
 * one message is billed for before the handler runs, the wait for the second
 * included.
 */
import { sleepUntil, systemClock } from '../../lib/core/clock.ts';
import type { LifecycleEvent } from '../../lib/core/events.ts';
import { tick } from '../../lib/engine/ticker.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import type { RoleMeters } from '../meter/replica-meter.ts';
import { subtractSnapshots } from '../meter/request-meter.ts';
import { BENCH_NOOP } from './bench-jobs.ts';
import { round } from './density.ts';
import { addScaled, perExecution, type PerExecution } from './per-execution.ts';
import { dailyJobAt, firstOpenSecond, registerSchedules } from './register-schedules.ts';

/** The sparse jobs' ids start with this (bench-replica.ts forwards their `claimed` events, for the waits). */
export const SPARSE_PREFIX = 'sparse-';
/** Seconds between two sparse slices: one a second, each in its own worker receive. */
export const SPARSE_SPACING_MS = 1000;
/** How often the sparse run ticks: often enough that with a 10 s lookahead every slice is sent before its second. */
export const SPARSE_TICK_MS = 2500;
/** A worker deletes a message after its commit, and a scanner its scan request after its scan, in batches: let them land before reading the meters. */
const SETTLE_MS = 1500;

/** The seed's deployment: 25,000 slices a day over 8 shards, a tick a minute: 0.46 shard scans per execution. */
export const SEED_DEPLOYMENT = { slicesPerDay: 25_000, shards: 8, ticksPerDay: 1440 } as const;
export const SEED_SHARD_SCANS_PER_EXECUTION = (SEED_DEPLOYMENT.shards * SEED_DEPLOYMENT.ticksPerDay) / SEED_DEPLOYMENT.slicesPerDay;

export interface SparseFleet {
  readonly runtime: Runtime;
  meters(): Promise<RoleMeters>;
  /** Commit and start times by execution key, from the fleet's events. */
  readonly committed: ReadonlyMap<string, number>;
  readonly started: ReadonlyMap<string, number>;
  /** Shard scans reported so far. */
  scans(): number;
  waitFor(done: () => boolean, timeoutMs: number, onTick: () => void): Promise<void>;
}

export interface SparseResult {
  readonly slices: number;
  readonly spacingMs: number;
  readonly tickMs: number;
  /** How long the sparse part took, registration and idle ticks included (s). */
  readonly wallSeconds: number;
  readonly committed: number;
  /** Shard scans during the run, and on the idle ticks after it. */
  readonly shardScans: number;
  readonly idleShardScans: number;
  /** Handler start minus message processing start, per execution (ms). */
  readonly waitMs: { readonly mean: number; readonly p50: number; readonly p90: number; readonly max: number };
  /** Of the wait, the mean claim (processing start to the claim's answer, ms): on this emulator, not DynamoDB. */
  readonly claimMsMean: number;
  /** Per execution: the workers' share and the scanner's per-slice share (its fixed part per shard scan taken out). */
  readonly perExecution: PerExecution;
  readonly perExecutionByRole: { readonly scanner: PerExecution; readonly worker: PerExecution };
  /** The scanner's measured share before the fixed part was taken out (the bench's compressed ticks). */
  readonly scannerMeasured: PerExecution;
  /** What one shard scan costs when nothing is due (its cursor's claim and move, the reconciler's reads). */
  readonly perShardScan: PerExecution;
}

/** Records each sparse message's processing start from its `claimed` event. */
export class SparseWaits {
  private readonly received = new Map<string, number>();
  private readonly claims: number[] = [];

  onEvent(event: LifecycleEvent): void {
    if (event.type === 'claimed' && event.jobId.startsWith(SPARSE_PREFIX) && event.claimMs !== undefined) {
      this.received.set(event.executionKey, Date.parse(event.at) - event.claimMs);
      this.claims.push(event.claimMs);
    }
  }

  /** The mean time from processing start to the claim's answer (ms): the part of the wait that is not for the second. */
  meanClaimMs(): number {
    return round(this.claims.reduce((sum, ms) => sum + ms, 0) / Math.max(1, this.claims.length), 1);
  }

  /** Handler start minus processing start, for every sparse execution that started. */
  waits(started: ReadonlyMap<string, number>): number[] {
    return [...started]
      .filter(([key]) => key.startsWith(SPARSE_PREFIX) && this.received.has(key))
      .map(([key, at]) => at - (this.received.get(key) ?? at));
  }
}

export async function runSparse(
  fleet: SparseFleet,
  waits: SparseWaits,
  slices: number,
  onProgress: (phase: string, done: number, total: number) => void,
): Promise<SparseResult> {
  const { runtime } = fleet;
  const startedAt = Date.now();
  const shards = runtime.config.shardCount;
  const firstDue = await firstOpenSecond(runtime.wheel, shards, Date.now() + 3000);
  const now = Date.now();
  await registerSchedules(runtime.clients.dynamo, runtime.config, slices, (i) =>
    dailyJobAt(`${SPARSE_PREFIX}${i}`, firstDue + i * SPARSE_SPACING_MS, shards, BENCH_NOOP, now),
  );
  const lastDue = firstDue + (slices - 1) * SPARSE_SPACING_MS;
  const done = (): number => [...fleet.committed.keys()].filter((key) => key.startsWith(SPARSE_PREFIX)).length;
  const progress = (): void => onProgress('sparse: one slice a second, each its own invocation', done(), slices);

  const before = await fleet.meters();
  const scansBefore = fleet.scans();
  let ticks = 0;
  // Ticks at a random phase within the second, as a deployment's tick is to its slices' seconds: the wait for the
  // second is then spread as it would be, not fixed by the bench's timer.
  for (let at = Date.now(); at < lastDue; at += SPARSE_TICK_MS) {
    await sleepUntil(systemClock, at + Math.random() * 500);
    await tick(runtime.scanQueue, shards);
    ticks++;
    progress();
  }
  await fleet.waitFor(() => done() >= slices && fleet.scans() - scansBefore >= ticks * shards, 60_000 + slices * 1000, progress);
  await systemClock.sleep(SETTLE_MS);
  const after = await fleet.meters();
  const shardScans = fleet.scans() - scansBefore;

  // The idle ticks: nothing due (every sparse job's next occurrence is tomorrow).
  const idleBefore = after;
  const idleScansBefore = fleet.scans();
  await tick(runtime.scanQueue, shards);
  await fleet.waitFor(() => fleet.scans() - idleScansBefore >= shards, 30_000, progress);
  await systemClock.sleep(SETTLE_MS);
  const idleAfter = await fleet.meters();

  const idleShardScans = fleet.scans() - idleScansBefore;
  const perShardScan = perExecution(subtractSnapshots(idleAfter.scanner, idleBefore.scanner), idleShardScans);
  const committed = done();
  const worker = perExecution(subtractSnapshots(after.worker, before.worker), committed);
  const scannerMeasured = perExecution(subtractSnapshots(after.scanner, before.scanner), committed);
  const scanner = perSliceScannerShare(addScaled(scannerMeasured, perShardScan, -shardScans / Math.max(1, committed)));
  const sparseWaits = waits.waits(fleet.started).sort((a, b) => a - b);
  const at = (p: number): number =>
    sparseWaits[Math.min(sparseWaits.length - 1, Math.max(0, Math.ceil(p * sparseWaits.length) - 1))] ?? Number.NaN;
  return {
    slices,
    spacingMs: SPARSE_SPACING_MS,
    tickMs: SPARSE_TICK_MS,
    wallSeconds: round((Date.now() - startedAt) / 1000, 1),
    committed,
    shardScans,
    idleShardScans,
    waitMs: {
      mean: round(sparseWaits.reduce((sum, w) => sum + w, 0) / Math.max(1, sparseWaits.length), 1),
      p50: at(0.5),
      p90: at(0.9),
      max: sparseWaits.at(-1) ?? Number.NaN,
    },
    claimMsMean: waits.meanClaimMs(),
    perExecution: addScaled(worker, scanner, 1),
    perExecutionByRole: { scanner, worker },
    scannerMeasured,
    perShardScan,
  };
}

/**
 * The scanner's SQS requests per slice are its sends: its receives and deletes are its scan requests' (one per shard
 * scan, batched by however the ticks' requests met in a receive), so they stay in the per-scan part.
 */
function perSliceScannerShare(scanner: PerExecution): PerExecution {
  return {
    ...scanner,
    sqsRequests: scanner.sqsSends,
    sqsReceives: 0,
    sqsDeletes: 0,
    sqsVisibilityChanges: 0,
    emptyReceives: 0,
    receivesWithMessages: 0,
  };
}
