/**
 * `npm run bench`: one run against the emulator (or whatever
 * AWS_ENDPOINT_URL names) measuring the burst, the ceiling beside it,
 * density, requests and request units per execution; then the dollars and
 * the capacity plan from those, report.json and chart.svg in `outDir`.
 *
 * Each part runs on its own resource prefix, so the bench never touches a
 * `cronfence dev` installation on the same emulator.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_LOOKAHEAD_MS } from '../../lib/core/advance-plan.ts';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { ensureAwsEndpoint } from '../../lib/local/emulator.ts';
import { runBurst } from './burst.ts';
import { measureWorkerBundleMemory } from './bundle-memory.ts';
import {
  planThroughput,
  preEnqueueLookaheadMs,
  ON_DEMAND_INITIAL_WRU_PER_SECOND,
  WARM_WRU_PER_SECOND,
  type SliceWriteMix,
} from './capacity-plan.ts';
import { measureCeiling } from './ceiling.ts';
import { renderBenchSvg } from './chart-svg.ts';
import { measureStoreCallsCeiling } from './store-calls-ceiling.ts';
import {
  cronfenceUsdPerMillion,
  heartbeatsFor,
  heartbeatUsdPerMillion,
  LEASE_CHOICES,
  schedulerUsdPerMillion,
  type HeartbeatCost,
} from './cost.ts';
import { round, runDensity } from './density.ts';
import { perExecution } from './per-execution.ts';
import { BURST_EXACT_WAIT_SECONDS, pricingGrid } from './pricing-grid.ts';
import { SEED_SHARD_SCANS_PER_EXECUTION } from './sparse.ts';
import { measureSettlement, settlementRow } from './settlement-cost.ts';
import { CONSTRUCT_WORK_QUEUE_VISIBILITY_MS, PRICE_TABLE } from './price-table.ts';
import type { BenchSizes } from './sizes.ts';
import { checkTargets, type BenchReport } from './report.ts';
import type { MeterSnapshot } from '../meter/request-meter.ts';

export interface BenchOptions {
  readonly quick: boolean;
  readonly sizes: BenchSizes;
  readonly outDir: string;
  /** Resource prefix; a fresh one by default. */
  readonly prefix?: string;
  readonly onProgress: (phase: string, done: number, total: number) => void;
  readonly log?: (line: string) => void;
  readonly now?: () => number;
}

const PLANNED_BURST = 1_000_000;

/**
 * The sweep re-sends live slices whose sweepAt (due + grace) has passed, in
 * case their message was lost. In a burst that takes longer than the grace
 * on a saturated emulator it re-sends slices that are merely waiting, which
 * measures overload rather than the happy path (the chaos drill covers the
 * sweep); in density no worker ever runs the slices, so the previous level's
 * would be re-sent. Both parts push it out of the way.
 */
export const SWEEP_GRACE_MS = { burst: 300_000, density: 3_600_000 } as const;

/** The density probe reaches its due schedules 30 s ahead (density.ts DUE_IN_MS); the burst's rounds tick a second before theirs. */
export const BENCH_LOOKAHEAD_MS = { burst: 10_000, density: 40_000 } as const;

/** Each operation's mean time in the burst, sent to answered (where the protocol's time goes: docs/bench.md). */
function meanMs(meter: MeterSnapshot): Record<string, number> {
  return Object.fromEntries(
    Object.entries(meter.requests).map(([name, count]) => [name, round((meter.requestMs[name] ?? 0) / Math.max(1, count), 1)]),
  );
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const aws = await ensureAwsEndpoint({ log: options.log });
  const base = options.prefix ?? `bench${randomUUID().slice(0, 6)}`;
  const sizes = options.sizes;
  const envFor = (part: keyof typeof SWEEP_GRACE_MS | 'settlement' | 'memory'): NodeJS.ProcessEnv => ({
    ...process.env,
    CRONFENCE_SWEEP_GRACE_MS: String(part === 'settlement' || part === 'memory' ? 30_000 : SWEEP_GRACE_MS[part]),
    CRONFENCE_PREFIX: `${base}-${part}`,
    CRONFENCE_SHARDS: String(sizes.shards),
    // Each part ticks on its own, once per round, so a round's jobs must be due in a wheel bucket no earlier
    // round's scan has passed (register-schedules.ts firstOpenSecond): a short lookahead keeps that wait short.
    // What a slice costs does not depend on it; the capacity plan models the lookahead apart.
    CRONFENCE_LOOKAHEAD_MS: String(BENCH_LOOKAHEAD_MS[part === 'density' ? 'density' : 'burst']),
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    CRONFENCE_WORKER_BATCHES: String(sizes.workerBatches),
    // The queue as the construct deploys it behind Lambda: every claim shortens its message's visibility.
    CRONFENCE_WORK_QUEUE_VISIBILITY_MS: String(CONSTRUCT_WORK_QUEUE_VISIBILITY_MS),
  });
  mkdirSync(options.outDir, { recursive: true });
  const clients = createAwsClients();
  try {
    const burst = await runBurst({
      env: envFor('burst'),
      slices: sizes.burst,
      sparseSlices: sizes.sparse,
      scanners: sizes.scanners,
      workers: sizes.workers,
      logDir: options.outDir,
      heartbeat: { holdMs: sizes.heartbeatHoldMs, concurrentJobs: sizes.heartbeatJobs },
      onProgress: options.onProgress,
    });
    const k = burst.meter.kinds;
    const ceiling = await measureCeiling({
      dynamo: clients.dynamo,
      sqs: clients.sqs,
      prefix: `${base}-ceiling`,
      dynamoWrites: k.dynamoWrite + k.dynamoTransactWrite + k.heartbeat,
      sendBatches: burst.meter.requests['sqs.SendMessageBatch'] ?? 0,
      concurrency: Math.min(256, sizes.workers * sizes.workerBatches),
      onProgress: (done, total) => options.onProgress('ceiling: plain writes and sends', done, total),
    });
    const ceilingSlicesPerSecond = round(sizes.burst / Math.max(0.001, ceiling.seconds), 1);
    const storeCalls = await measureStoreCallsCeiling({
      env: envFor('burst'),
      slices: sizes.burst,
      batchesInFlight: sizes.workers * sizes.workerBatches,
      onProgress: (done, total) => options.onProgress('ceiling: the burst’s store calls without the engine', done, total),
    });
    options.onProgress('settlement: 1,200 payouts, chunked commits and outbox wires', 0, 1);
    const settlement = settlementRow(
      await measureSettlement(envFor('settlement'), sizes.settlementMerchants),
      ceiling.dynamoWritesPerSecond,
    );
    options.onProgress('settlement: 1,200 payouts, chunked commits and outbox wires', 1, 1);
    const density = await runDensity({
      env: envFor('density'),
      levels: sizes.schedules,
      duePerLevel: sizes.duePerLevel,
      onProgress: options.onProgress,
    });
    const bundleMemory = await measureWorkerBundleMemory({
      env: envFor('memory'),
      onProgress: (done, total) => options.onProgress('worker memory: the synthesized bundle, one batch of 10', done, total),
    });

    const happy = perExecution(burst.meter, burst.committed);
    const byRole = { scanner: perExecution(burst.scannerMeter, burst.committed), worker: perExecution(burst.workerMeter, burst.committed) };
    const rounds = burst.heartbeatRounds;
    const measuredRound = rounds.at(-1);
    // A heartbeat's SQS cost: the round's single visibility changes (its extensions) per renewal.
    const heartbeat: HeartbeatCost | undefined =
      measuredRound && measuredRound.renewalsPerJob > 0
        ? {
            writeUnitsPerRenewal: measuredRound.writeUnitsPerRenewal,
            sqsRequestsPerHeartbeat: round(measuredRound.extensionsPerJob / measuredRound.renewalsPerJob, 2),
          }
        : undefined;
    const defaultLease = LEASE_CHOICES[0] ?? { leaseMs: 4000, heartbeatMs: 1000 };
    const workerPeakRssMb = round(burst.workerMeter.maxRssBytes / 1_048_576, 1);
    // Priced at the size chosen from the deployed bundle's peak, not the TypeScript replicas' (bundle-memory.ts).
    const workerMemoryMb = bundleMemory.chosenMb;
    const costOptions = { heartbeat, workerMemoryMb, invocationsPerExecution: byRole.worker.receivesWithMessages };
    const cronfence1s = cronfenceUsdPerMillion(happy, 1, defaultLease, costOptions);
    const sparse = burst.sparse;
    // Each sparse invocation holds one message and is billed from its processing start to its handler's start.
    const sparseWaitS = round(sparse.waitMs.mean / 1000, 3);
    const sparseCostOptions = {
      heartbeat,
      workerMemoryMb,
      invocationsPerExecution: sparse.perExecutionByRole.worker.receivesWithMessages,
      waitSecondsPerInvocation: sparseWaitS,
    };
    const sparse1s = cronfenceUsdPerMillion(sparse.perExecution, 1, defaultLease, sparseCostOptions);
    const mix: SliceWriteMix = {
      scannerWru: byRole.scanner.baseWriteRequestUnits,
      workerWru: byRole.worker.baseWriteRequestUnits,
      shardKeyedWruPerSlice: { wheel: happy.wheelWriteUnits, ...happy.indexWriteUnits },
    };
    const [first, second] = rounds;
    // Renewals come one per heartbeat interval; a job that ends just past a beat makes one more, whatever else runs.
    const flatInJobs =
      first !== undefined &&
      second !== undefined &&
      first.renewalsPerJob > 0 &&
      Math.abs(first.renewalsPerJob - second.renewalsPerJob) <= 1;
    const {
      meter: _meter,
      scannerMeter: _s,
      workerMeter: _w,
      heartbeatRounds: _h,
      withBusinessWrite,
      sparse: _sparse,
      ...burstFigures
    } = burst;
    const partial: Omit<BenchReport, 'targets' | 'chart'> = {
      version: 1,
      generatedAt: new Date(startedAt).toISOString(),
      mode: options.quick ? 'quick' : 'full',
      wallSeconds: 0,
      endpoint: aws.endpoint ?? 'AWS',
      settings: { ...sizes, sweepGraceMs: SWEEP_GRACE_MS },
      density,
      burst: { ...burstFigures, requests: burst.meter.requests, requestMeanMs: meanMs(burst.meter) },
      ceiling: { ...ceiling, slicesPerSecond: ceilingSlicesPerSecond },
      ceilingRatio: round(burst.throughputSlicesPerSecond / Math.max(0.001, ceilingSlicesPerSecond), 3),
      storeCallsCeiling: storeCalls,
      storeCallsRatio: round(burst.throughputSlicesPerSecond / Math.max(0.001, storeCalls.slicesPerSecond), 3),
      perExecution: happy,
      perExecutionByRole: byRole,
      perExecutionWithBusinessWrite: withBusinessWrite,
      settlement,
      workerMemory: { peakRssMb: workerPeakRssMb, chosenMb: workerMemoryMb },
      workerBundleMemory: bundleMemory,
      heartbeats: { rounds, flatInJobs },
      usdPerMillion: cronfence1s.total,
      overheadUsdPerMillion: cronfence1s.overhead,
      sparse,
      sparsePerExecution: sparse.perExecution,
      sparseOverheadUsdPerMillion: sparse1s.overhead,
      costs: {
        cronfence1s,
        sparse1s,
        sparseWithinSecond1s: cronfenceUsdPerMillion(sparse.perExecution, 1, defaultLease, {
          ...sparseCostOptions,
          waitSecondsPerInvocation: 0,
        }),
        sparseShardScansAtSeedUsdPerMillion: round(
          SEED_SHARD_SCANS_PER_EXECUTION *
            (sparse.perShardScan.writeRequestUnits * PRICE_TABLE.dynamoWriteRequestUnitPerMillion +
              sparse.perShardScan.readRequestUnits * PRICE_TABLE.dynamoReadRequestUnitPerMillion +
              (sparse.perShardScan.sqsRequests + sparse.perShardScan.sqsExtensions) * PRICE_TABLE.sqsRequestPerMillion),
          4,
        ),
        cronfenceWithinSecond1s: cronfenceUsdPerMillion(happy, 1, defaultLease, { ...costOptions, waitSecondsPerInvocation: 0 }),
        pricingGrid: pricingGrid({
          burst: {
            perExecution: happy,
            invocationsPerExecution: byRole.worker.receivesWithMessages,
            exactWaitSeconds: BURST_EXACT_WAIT_SECONDS,
          },
          sparse: {
            perExecution: sparse.perExecution,
            invocationsPerExecution: sparse.perExecutionByRole.worker.receivesWithMessages,
            exactWaitSeconds: sparseWaitS,
          },
          heartbeat,
          workerMemoryMb,
        }),
        cronfence45s: cronfenceUsdPerMillion(happy, 45, defaultLease, costOptions),
        eventBridgeScheduler1s: schedulerUsdPerMillion(1, { memoryMb: workerMemoryMb }),
        eventBridgeSchedulerIdempotency1s: schedulerUsdPerMillion(1, { memoryMb: workerMemoryMb, idempotency: true }),
        eventBridgeScheduler45s: schedulerUsdPerMillion(45, { memoryMb: workerMemoryMb }),
        leaseChoices: LEASE_CHOICES.map((lease) => ({
          ...lease,
          failoverWithinS: lease.leaseMs / 1000,
          heartbeatsPer45sJob: heartbeatsFor(45, lease.heartbeatMs),
          heartbeatUsdPerMillion45s: round(heartbeatUsdPerMillion(45, lease, heartbeat), 4),
          totalUsdPerMillion45s: cronfenceUsdPerMillion(happy, 45, lease, costOptions).total,
          overheadUsdPerMillion1s: cronfenceUsdPerMillion(happy, 1, lease, costOptions).overhead,
        })),
      },
      capacityPlan: {
        mix,
        burstSlices: PLANNED_BURST,
        initial: planThroughput(mix, ON_DEMAND_INITIAL_WRU_PER_SECOND, PLANNED_BURST),
        initialPreCreated: planThroughput(
          mix,
          ON_DEMAND_INITIAL_WRU_PER_SECOND,
          PLANNED_BURST,
          preEnqueueLookaheadMs(PLANNED_BURST, mix.scannerWru, ON_DEMAND_INITIAL_WRU_PER_SECOND) ?? MAX_LOOKAHEAD_MS,
        ),
        warm: planThroughput(mix, WARM_WRU_PER_SECOND, PLANNED_BURST),
        preEnqueueLookaheadMs: {
          initial: preEnqueueLookaheadMs(PLANNED_BURST, mix.scannerWru, ON_DEMAND_INITIAL_WRU_PER_SECOND) ?? null,
          warm: preEnqueueLookaheadMs(PLANNED_BURST, mix.scannerWru, WARM_WRU_PER_SECOND) ?? null,
        },
      },
      prices: PRICE_TABLE,
    };
    const withWall = { ...partial, wallSeconds: round((now() - startedAt) / 1000, 1) };
    const chart = path.join(options.outDir, 'chart.svg');
    const report: BenchReport = { ...withWall, targets: checkTargets(withWall), chart };
    writeFileSync(chart, renderBenchSvg(report));
    writeFileSync(path.join(options.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  } finally {
    destroyAwsClients(clients);
    await aws.stop();
  }
}
