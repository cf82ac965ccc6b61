/**
 * The bench's report: report.json's shape (a documented interface,
 * docs/bench.md: keep fields additive), the targets of issue 11 (the lean
 * data model) checked against it, and its terminal rendering.
 */
import { table } from '../../lib/local/format.ts';
import type { BurstResult, HeartbeatRound } from './burst.ts';
import type { CapacityPlanReport } from './capacity-plan.ts';
import type { CeilingResult } from './ceiling.ts';
import type { StoreCallsCeiling } from './store-calls-ceiling.ts';
import type { CostBreakdown, LeaseSettings } from './cost.ts';
import type { DensityLevel, DensityResult } from './density.ts';
import type { PerExecution } from './per-execution.ts';
import type { PriceTable } from './price-table.ts';
import type { SettlementRow } from './settlement-cost.ts';
import { LAMBDA_RUNTIME_ALLOWANCE_MB, type WorkerBundleMemory } from './bundle-memory.ts';
import type { BenchSizes } from './sizes.ts';
import { pricingGridCells, PRICING_GRID_HEADER, type PricingRow } from './pricing-grid.ts';
import { SEED_SHARD_SCANS_PER_EXECUTION, type SparseResult } from './sparse.ts';

export interface LeaseChoiceCost extends LeaseSettings {
  /** A standby takes over within about one lease after the holder's last heartbeat. */
  readonly failoverWithinS: number;
  readonly heartbeatsPer45sJob: number;
  readonly heartbeatUsdPerMillion45s: number;
  readonly totalUsdPerMillion45s: number;
  /** Scheduling overhead of a 1 s job under this lease: its renewals are most of what the lease choice changes. */
  readonly overheadUsdPerMillion1s: number;
}

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface BenchReport {
  readonly version: 1;
  readonly generatedAt: string;
  readonly mode: 'quick' | 'full';
  readonly wallSeconds: number;
  /** The AWS endpoint measured (the emulator's), or "AWS". */
  readonly endpoint: string;
  readonly settings: BenchSizes & { readonly sweepGraceMs: { readonly burst: number; readonly density: number } };
  readonly density: DensityResult;
  readonly burst: Omit<BurstResult, 'meter' | 'scannerMeter' | 'workerMeter' | 'heartbeatRounds' | 'withBusinessWrite' | 'sparse'> & {
    readonly requests: Record<string, number>;
    /** Mean milliseconds per request by service.Operation, sent to answered. */
    readonly requestMeanMs: Record<string, number>;
  };
  readonly ceiling: CeilingResult & { readonly slicesPerSecond: number };
  /** End-to-end burst throughput ÷ the ceiling's slices per second. */
  readonly ceilingRatio: number;
  /** The burst's own store calls and SQS batches without the engine (store-calls-ceiling.ts). */
  readonly storeCallsCeiling: StoreCallsCeiling;
  /** End-to-end burst throughput ÷ that: the share the engine's protocol leaves of what its requests cost here. */
  readonly storeCallsRatio: number;
  /** Happy path, per committed burst execution. */
  readonly perExecution: PerExecution;
  readonly perExecutionByRole: { readonly scanner: PerExecution; readonly worker: PerExecution };
  /** Per execution of jobs whose commit carries one business write (scanner and worker). */
  readonly perExecutionWithBusinessWrite: PerExecution;
  /** One 1,200-merchant settlement: units and dollars per payout, its time here beside the ceiling (settlement-cost.ts). */
  readonly settlement: SettlementRow;
  /** The burst's worker processes' peak resident set (TypeScript loader included), and the Lambda memory chosen from the bundle (priced below). */
  readonly workerMemory: { readonly peakRssMb: number; readonly chosenMb: number };
  /** The synthesized worker bundle in a bare Node process under one batch of 10 (bundle-memory.ts): what the size is chosen from. */
  readonly workerBundleMemory: WorkerBundleMemory;
  readonly heartbeats: { readonly rounds: readonly HeartbeatRound[]; readonly flatInJobs: boolean };
  /** Dollars per million executions of a 1-second job on cronfence (headline). */
  readonly usdPerMillion: number;
  /** The same without the handler's own run time: what scheduling it costs. */
  readonly overheadUsdPerMillion: number;
  /** Slices one at a time, each its own worker invocation (sparse.ts): timings, waits, per execution by role. */
  readonly sparse: SparseResult;
  /** Per sparse execution: the workers' share and the scanner's per-slice share (its fixed part per shard scan apart). */
  readonly sparsePerExecution: PerExecution;
  /** Scheduling overhead of a 1 s job at the sparse run's density, on its exact second (the measured wait billed). */
  readonly sparseOverheadUsdPerMillion: number;
  readonly costs: {
    readonly cronfence1s: CostBreakdown;
    /** The sparse run's mix, a 1 s job on its exact second: the measured wait billed per invocation. */
    readonly sparse1s: CostBreakdown;
    /** The same within its second (no wait): modelled, not measured. */
    readonly sparseWithinSecond1s: CostBreakdown;
    /**
     * The scanner's fixed part (per shard scan, whatever it finds; DynamoDB and SQS, not its Lambda) at the seed's
     * deployment (8 shards, a tick a minute, 25,000 slices a day): not per execution, so not in the figures.
     */
    readonly sparseShardScansAtSeedUsdPerMillion: number;
    /** The burst's mix within its second (no wait): modelled. */
    readonly cronfenceWithinSecond1s: CostBreakdown;
    /** Per million executions by density, precision, job length and lease (pricing-grid.ts; docs/bench.md prints it). */
    readonly pricingGrid: readonly PricingRow[];
    readonly cronfence45s: CostBreakdown;
    readonly eventBridgeScheduler1s: CostBreakdown;
    /** EventBridge Scheduler plus Powertools idempotency's two writes per execution (which still does not fence). */
    readonly eventBridgeSchedulerIdempotency1s: CostBreakdown;
    readonly eventBridgeScheduler45s: CostBreakdown;
    readonly leaseChoices: readonly LeaseChoiceCost[];
  };
  readonly capacityPlan: CapacityPlanReport;
  readonly prices: PriceTable;
  readonly targets: readonly TargetCheck[];
  readonly chart: string;
}

/** The overhead targets (issue 32), dollars per million executions of a 1 s job beyond the handler's own run time. */
export const OVERHEAD_TARGET_USD = 2;
export const SPARSE_OVERHEAD_TARGET_USD = 3;
/** DynamoDB write requests and write units per execution (issue 32): claim, commit and the scanner's share. */
export const WRITES_TARGET = 2.1;
export const WRITE_UNITS_TARGET = 3;
/** By when a 1,000,000-slice midnight must have started: on a pre-warmed table, and on a new on-demand one. */
export const BURST_DEADLINES_S = { warm: 300, initial: 600 } as const;

/** The overhead of the same 1 s job under the next lease choice, whose heartbeat comes after the job is done. */
function leaseAlternative(choices: readonly LeaseChoiceCost[]): string {
  const next = choices[1];
  return next
    ? `; $${next.overheadUsdPerMillion1s.toFixed(2)} at lease ${next.leaseMs / 1000} s / heartbeat ${next.heartbeatMs / 1000} s`
    : '';
}

export function checkTargets(report: Omit<BenchReport, 'targets' | 'chart'>): TargetCheck[] {
  const p = report.perExecution;
  const w = report.perExecutionWithBusinessWrite;
  const k = report.costs;
  const plan = report.capacityPlan;
  const sp = report.sparsePerExecution;
  return [
    {
      target: `burst: DynamoDB write requests per execution ≤ ${WRITES_TARGET} (claim, commit and the scanner's share)`,
      measured: fmt(p.dynamoWriteRequests),
      met: p.dynamoWriteRequests <= WRITES_TARGET,
    },
    {
      target: `burst: write units per execution ≤ ${WRITE_UNITS_TARGET} (index units and scanner included)`,
      measured: fmt(p.writeRequestUnits),
      met: p.writeRequestUnits <= WRITE_UNITS_TARGET,
    },
    {
      target: `sparse: DynamoDB write requests per execution ≤ ${WRITES_TARGET} (the scanner's per-scan part apart)`,
      measured: `${fmt(sp.dynamoWriteRequests)} (scanner ${fmt(report.sparse.perExecutionByRole.scanner.dynamoWriteRequests)}; + ${fmt(report.sparse.perShardScan.dynamoWriteRequests)} per shard scan)`,
      met: sp.dynamoWriteRequests <= WRITES_TARGET,
    },
    {
      target: `sparse: write units per execution ≤ ${WRITE_UNITS_TARGET}`,
      measured: fmt(sp.writeRequestUnits),
      met: sp.writeRequestUnits <= WRITE_UNITS_TARGET,
    },
    { target: 'with one business write: ≤ 3 write requests', measured: fmt(w.dynamoWriteRequests), met: w.dynamoWriteRequests <= 3 },
    { target: 'with one business write: ≤ 5 write units', measured: fmt(w.writeRequestUnits), met: w.writeRequestUnits <= 5 },
    {
      target: 'SQS requests per execution ≤ 1 on the Lambda path (claim-time visibility included, heartbeats apart as for DynamoDB)',
      measured: `${fmt(p.sqsRequests)} (+ ${fmt(p.sqsExtensions)} heartbeat extensions on this emulator)`,
      met: p.sqsRequests <= 1,
    },
    {
      target: 'success events opt-in (none by default)',
      measured: `${fmt(p.eventEntries)} entries per execution`,
      met: p.eventEntries === 0,
    },
    {
      target: `sparse overhead ≤ $${SPARSE_OVERHEAD_TARGET_USD.toFixed(2)} per million (1 s job on its exact second, worker ${report.workerMemory.chosenMb} MB)`,
      measured: `$${report.sparseOverheadUsdPerMillion.toFixed(2)} (within the second, modelled: $${k.sparseWithinSecond1s.overhead.toFixed(2)})`,
      met: report.sparseOverheadUsdPerMillion <= SPARSE_OVERHEAD_TARGET_USD,
    },
    {
      target: `burst overhead ≤ $${OVERHEAD_TARGET_USD.toFixed(2)} per million (1 s job on its exact second, worker ${report.workerMemory.chosenMb} MB)`,
      measured:
        `$${k.cronfence1s.overhead.toFixed(2)}, within the second (modelled) $${k.cronfenceWithinSecond1s.overhead.toFixed(2)} (EventBridge Scheduler $${k.eventBridgeScheduler1s.overhead.toFixed(2)}, with Powertools idempotency $${k.eventBridgeSchedulerIdempotency1s.overhead.toFixed(2)})` +
        leaseAlternative(k.leaseChoices),
      met: k.cronfence1s.overhead <= OVERHEAD_TARGET_USD,
    },
    {
      target: 'end-to-end burst throughput ≥ 50% of the ceiling measured in the same run',
      measured: `${Math.round(report.ceilingRatio * 100)}% (${Math.round(report.storeCallsRatio * 100)}% of the same store calls without the engine)`,
      met: report.ceilingRatio >= 0.5,
    },
    {
      target: `1,000,000 slices at 00:00 all started by 00:05 on a table warmed to ${plan.warm.tableWruPerSecond.toLocaleString('en-US')} WRU/s`,
      measured: `${plan.warm.allCommittedAfterSecondS} s after the second`,
      met: plan.warm.allCommittedAfterSecondS <= BURST_DEADLINES_S.warm,
    },
    {
      target: '1,000,000 slices at 00:00 all started by 00:10 on a new on-demand table (4,000 WRU/s)',
      measured: `${plan.initialPreCreated.allCommittedAfterSecondS} s after the second, lookahead ${minutes(plan.initialPreCreated.lookaheadMs)} (${plan.initial.allCommittedAfterSecondS} s at ${minutes(plan.initial.lookaheadMs)})`,
      met: plan.initialPreCreated.allCommittedAfterSecondS <= BURST_DEADLINES_S.initial,
    },
    ...densityTargets(report.density.levels),
  ];
}

/** Scanner memory and items touched per due slice, flat from the first density level to the last. */
export function densityTargets(levels: readonly DensityLevel[]): TargetCheck[] {
  const first = levels[0];
  const last = levels.at(-1);
  if (!first || !last || levels.length < 2) return [];
  // A level whose scan did not send every due schedule measured a scan that failed or stopped, not density.
  const short = levels.filter((level) => level.sent < level.due);
  const incomplete = short
    .map(
      (level) =>
        ` (the scan at ${level.schedules.toLocaleString('en-US')} sent ${level.sent} of ${level.due} due${level.scanErrors[0] ? `; ${level.scanErrors[0]}` : ''})`,
    )
    .join('');
  return [
    {
      target: 'scanner memory flat in registered schedules',
      measured: `peak RSS ${first.scannerPeakRssMb} MB at ${first.schedules.toLocaleString('en-US')} → ${last.scannerPeakRssMb} MB at ${last.schedules.toLocaleString('en-US')}${incomplete}`,
      met: short.length === 0 && last.scannerPeakRssMb <= first.scannerPeakRssMb * 1.2 + 10,
    },
    {
      target: 'items touched per due slice flat in registered schedules',
      measured: `${first.itemsTouchedPerDueSlice} → ${last.itemsTouchedPerDueSlice}${incomplete}`,
      met: short.length === 0 && last.itemsTouchedPerDueSlice <= first.itemsTouchedPerDueSlice * 1.1 + 0.05,
    },
  ];
}

export function renderReport(report: BenchReport): string {
  const lines: string[] = [];
  const section = (title: string): void => void lines.push('', title);
  lines.push(`cronfence bench (${report.mode}) — ${report.wallSeconds} s, against ${report.endpoint}`);

  section(
    `1. Density: one scan window over ${report.density.shards} shards (${report.settings.duePerLevel} schedules due in the window at each level)`,
  );
  lines.push(
    table([
      [
        'schedules',
        'due slices',
        'items read',
        'items written',
        'items/due slice',
        'Dynamo req/due slice',
        'ms/shard mean',
        'ms/shard max',
        'scanner RSS (idle → peak)',
        'heap peak',
      ],
      ...report.density.levels.map((l) => [
        l.schedules.toLocaleString('en-US'),
        l.sent,
        l.itemsRead,
        l.itemsWritten,
        l.itemsTouchedPerDueSlice,
        l.dynamoRequestsPerDueSlice,
        l.msPerShardMean,
        l.msPerShardMax,
        `${l.scannerRssBeforeMb} → ${l.scannerPeakRssMb} MB`,
        `${l.scannerPeakHeapMb} MB`,
      ]),
    ]),
  );

  const b = report.burst;
  section(
    `2. Burst: ${b.slices.toLocaleString('en-US')} slices due at one second, ${b.shards} shards, ${b.scanners} scanner and ${b.workers} worker processes × ${report.settings.workerBatches} batches in flight (scan requested ${b.scanRequestedS} s before)`,
  );
  lines.push(
    table([
      ['after the due second', 'seconds'],
      ['all enqueued (last scan done)', b.timeline.allEnqueuedS],
      ['first committed', b.timeline.firstCommittedS],
      ['all started', b.timeline.allStartedS],
      ['all committed', b.timeline.allCommittedS],
      ['throughput (scan request → last commit)', `${b.throughputSlicesPerSecond} slices/s`],
      ['start lag p50 / p90 / p99 / max', `${b.startLagMs.p50} / ${b.startLagMs.p90} / ${b.startLagMs.p99} / ${b.startLagMs.max} ms`],
      ['committed', `${b.committed} of ${b.slices}`],
    ]),
  );

  const sp = report.sparse;
  section(
    `2b. Sparse: ${sp.slices} slices one ${sp.spacingMs / 1000} s apart (the seed's 25,000 a day, one every 3.5 s, scaled), same fleet, a tick every ${sp.tickMs / 1000} s`,
  );
  lines.push(
    table([
      ['', ''],
      ['committed', `${sp.committed} of ${sp.slices}`],
      ['took (registration and idle ticks included)', `${sp.wallSeconds} s`],
      ['worker invocations per execution (receives with messages)', fmt(sp.perExecutionByRole.worker.receivesWithMessages)],
      [
        'wait, handler start − message processing start, mean / p50 / p90 / max',
        `${sp.waitMs.mean} / ${sp.waitMs.p50} / ${sp.waitMs.p90} / ${sp.waitMs.max} ms (of which the claim ${sp.claimMsMean} ms)`,
      ],
      ['shard scans (run / idle ticks after it)', `${sp.shardScans} / ${sp.idleShardScans}`],
      [
        'per shard scan, whatever it finds (apart)',
        `${fmt(sp.perShardScan.dynamoWriteRequests)} writes, ${fmt(sp.perShardScan.writeRequestUnits)} WRU, ${fmt(sp.perShardScan.readRequestUnits)} RRU, ${fmt(sp.perShardScan.sqsRequests)} SQS`,
      ],
      [
        "  at the seed's 8 shards, a tick a minute, 25,000 slices a day",
        `${fmt(SEED_SHARD_SCANS_PER_EXECUTION)} shard scans per execution: $${report.costs.sparseShardScansAtSeedUsdPerMillion.toFixed(2)} per million executions (not in the figures)`,
      ],
    ]),
  );

  const c = report.ceiling;
  section('3. Ceiling, same run: plain conditional PutItem + SendMessageBatch from one process');
  lines.push(
    table([
      ['requests', 'concurrency', 'seconds', 'writes/s', 'batches/s', 'ceiling slices/s', 'ours slices/s', 'ratio'],
      [
        `${c.dynamoWrites} writes + ${c.sendBatches} batches`,
        c.concurrency,
        c.seconds,
        c.dynamoWritesPerSecond,
        c.sendBatchesPerSecond,
        c.slicesPerSecond,
        b.throughputSlicesPerSecond,
        `${Math.round(report.ceilingRatio * 100)}%`,
      ],
    ]),
  );
  const sc = report.storeCallsCeiling;
  lines.push('');
  lines.push(
    `The burst's own store calls without the engine (per slice: the claim's PutItem, the job read, the commit's UpdateItem; SQS batches per 10), ${sc.batchesInFlight} batches in flight:`,
  );
  lines.push(
    table([
      ['slices', 'seconds', 'slices/s', 'ours slices/s', 'ratio', 'this ÷ plain writes'],
      [
        sc.slices,
        sc.seconds,
        sc.slicesPerSecond,
        b.throughputSlicesPerSecond,
        `${Math.round(report.storeCallsRatio * 100)}%`,
        `${Math.round((sc.slicesPerSecond / Math.max(0.001, c.slicesPerSecond)) * 100)}%`,
      ],
    ]),
  );

  const p = report.perExecution;
  section(`4. Requests per execution (burst happy path, ${b.committed} executions; heartbeats and empty receives apart)`);
  lines.push(
    table([
      ['kind', 'per execution', 'scanner', 'worker', 'sparse', 'sparse scanner', 'sparse worker'],
      ...(
        [
          ['DynamoDB write requests', 'dynamoWriteRequests'],
          ['  of which TransactWriteItems', 'transactWriteRequests'],
          ['  items in those transactions', 'transactItems'],
          ['DynamoDB read requests', 'dynamoReadRequests'],
          ['write request units (base tables and indexes)', 'writeRequestUnits'],
          ['  of which base tables', 'baseWriteRequestUnits'],
          ['read request units', 'readRequestUnits'],
          ["SQS requests (send+receive+delete+claims' visibility)", 'sqsRequests'],
          ['  sends', 'sqsSends'],
          ['  receives with messages', 'sqsReceives'],
          ['  deletes', 'sqsDeletes'],
          ["  claims' visibility changes (batched)", 'sqsVisibilityChanges'],
          ['empty receives (idle pollers)', 'emptyReceives'],
          ['heartbeats (DynamoDB renewals)', 'heartbeats'],
          ["heartbeats' visibility extensions (SQS)", 'sqsExtensions'],
          ['EventBridge PutEvents requests', 'eventRequests'],
          ['EventBridge event entries', 'eventEntries'],
          ['receives with messages (invocations)', 'receivesWithMessages'],
        ] as const
      ).map(([label, key]) => [
        label,
        fmt(p[key]),
        fmt(report.perExecutionByRole.scanner[key]),
        fmt(report.perExecutionByRole.worker[key]),
        fmt(report.sparsePerExecution[key]),
        fmt(sp.perExecutionByRole.scanner[key]),
        fmt(sp.perExecutionByRole.worker[key]),
      ]),
      ...Object.entries(p.indexWriteUnits).map(([index, units]) => [
        `GSI write units ${index}`,
        fmt(units),
        fmt(report.perExecutionByRole.scanner.indexWriteUnits[index] ?? 0),
        fmt(report.perExecutionByRole.worker.indexWriteUnits[index] ?? 0),
        fmt(report.sparsePerExecution.indexWriteUnits[index] ?? 0),
        fmt(sp.perExecutionByRole.scanner.indexWriteUnits[index] ?? 0),
        fmt(sp.perExecutionByRole.worker.indexWriteUnits[index] ?? 0),
      ]),
      [
        '  of which the wheel table (shard-keyed)',
        fmt(p.wheelWriteUnits),
        fmt(report.perExecutionByRole.scanner.wheelWriteUnits),
        fmt(report.perExecutionByRole.worker.wheelWriteUnits),
        fmt(report.sparsePerExecution.wheelWriteUnits),
        fmt(sp.perExecutionByRole.scanner.wheelWriteUnits),
        fmt(sp.perExecutionByRole.worker.wheelWriteUnits),
      ],
    ]),
  );
  const wb = report.perExecutionWithBusinessWrite;
  lines.push(
    '',
    `With one business write in the commit: ${fmt(wb.dynamoWriteRequests)} DynamoDB write requests, ${fmt(wb.writeRequestUnits)} write units (${fmt(wb.transactWriteRequests)} transactions) per execution.`,
  );
  lines.push(
    '',
    table([
      ['request', 'count', 'per execution'],
      ...Object.entries(b.requests)
        .filter(([, n]) => n > 0)
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([name, n]) => [name, n, (n / Math.max(1, b.committed)).toFixed(3)]),
    ]),
  );
  section('Heartbeats (jobs holding their lease)');
  lines.push(
    table([
      ['jobs at once', 'hold', 'renewals/job', 'visibility changes/job', 'renewals/job-second', 'WRU/renewal'],
      ...report.heartbeats.rounds.map((r) => [
        r.jobs,
        `${r.holdMs / 1000} s`,
        r.renewalsPerJob,
        r.visibilityChangesPerJob,
        r.renewalsPerJobSecond,
        r.writeUnitsPerRenewal,
      ]),
    ]),
  );

  const k = report.costs;
  const m = report.workerMemory;
  section(
    `Dollars per million executions (us-east-1, prices of ${report.prices.asOf}, tools/bench/price-table.ts; Lambda Arm at ${m.chosenMb} MB, chosen from the worker bundle's (table 7); ${fmt(report.perExecutionByRole.worker.receivesWithMessages)} invocations per execution as measured)`,
  );
  lines.push(
    table([
      [
        '',
        'DynamoDB W',
        'DynamoDB R',
        'SQS',
        'Lambda req',
        'wait for second',
        'handler GB-s',
        'EventBridge',
        'Scheduler',
        'total',
        'overhead',
      ],
      ...(
        [
          ['cronfence burst, 1 s job', k.cronfence1s],
          ['  within the second (modelled)', k.cronfenceWithinSecond1s],
          ['cronfence sparse, 1 s job', k.sparse1s],
          ['  within the second (modelled)', k.sparseWithinSecond1s],
          ['EventBridge Scheduler + Lambda, 1 s job', k.eventBridgeScheduler1s],
          ['  + Powertools idempotency', k.eventBridgeSchedulerIdempotency1s],
          ['cronfence burst, 45 s job', k.cronfence45s],
          ['EventBridge Scheduler + Lambda, 45 s job', k.eventBridgeScheduler45s],
        ] as const
      ).map(([label, cost]) => [
        label,
        usd(cost.dynamoWrites),
        usd(cost.dynamoReads),
        usd(cost.sqs),
        usd(cost.lambdaRequests),
        usd(cost.lambdaWait),
        usd(cost.lambdaCompute),
        usd(cost.events),
        usd(cost.scheduler),
        usd(cost.total),
        usd(cost.overhead),
      ]),
    ]),
  );
  lines.push(
    '',
    table([
      [
        'lease / heartbeat',
        'failover within',
        'heartbeats in a 45 s job',
        'heartbeats $/M',
        'cronfence 45 s job $/M',
        '1 s job overhead $/M',
      ],
      ...k.leaseChoices.map((l) => [
        `${l.leaseMs / 1000} s / ${l.heartbeatMs / 1000} s`,
        `~${l.failoverWithinS} s`,
        l.heartbeatsPer45sJob,
        usd(l.heartbeatUsdPerMillion45s),
        usd(l.totalUsdPerMillion45s),
        usd(l.overheadUsdPerMillion1s),
      ]),
    ]),
  );

  section(
    `Per million executions by density, start precision, job length and lease (pricing-grid.ts; sparse waits ${sp.waitMs.mean} ms measured, burst 500 ms modelled; within the second: the wait removed, modelled)`,
  );
  lines.push(table([[...PRICING_GRID_HEADER], ...k.pricingGrid.map(pricingGridCells)]));

  const plan = report.capacityPlan;
  section(
    `5. Capacity plan (per slice: scanner ${fmt(plan.mix.scannerWru)} WRU, worker ${fmt(plan.mix.workerWru)} WRU; shard-keyed units ${Object.entries(
      plan.mix.shardKeyedWruPerSlice,
    )
      .map(([i, u]) => `${i} ${fmt(u)}`)
      .join(', ')})`,
  );
  lines.push(
    table([
      [
        'table write throughput',
        'lookahead',
        'slices/s',
        'shards needed',
        'hottest shard key',
        `${plan.burstSlices.toLocaleString('en-US')}-slice burst at the second`,
        'pre-enqueue (scanner part)',
        'done before the second',
        'surfacing early',
        'all started by',
        'nothing pre-enqueued',
        'WRU/s to pre-enqueue',
      ],
      ...[plan.initial, plan.initialPreCreated, plan.warm].map((t) => [
        `${t.tableWruPerSecond.toLocaleString('en-US')} WRU/s`,
        minutes(t.lookaheadMs),
        t.slicesPerSecond,
        t.shardsNeeded,
        t.hottestKey,
        `${t.burstAtSecondSeconds} s`,
        `${t.preEnqueueSeconds} s`,
        t.preEnqueueFitsLookahead ? 'yes' : 'no',
        t.earlySurfacingSlices.toLocaleString('en-US'),
        `+${t.allCommittedAfterSecondS} s`,
        `${t.burstColdSeconds} s`,
        t.wruPerSecondToPreEnqueue.toLocaleString('en-US'),
      ]),
    ]),
  );

  const within = plan.initial.wruPerSecondWithin;
  lines.push(
    '',
    `With lookahead ${minutes(plan.initial.lookaheadMs)} (every message delayed to its second), every slice has started within 5 minutes at ${within.fiveMinutes.toLocaleString('en-US')} WRU/s and within 10 minutes at ${within.tenMinutes.toLocaleString('en-US')} WRU/s of table throughput (warmThroughput on the construct).`,
    `With lookahead ${minutes(plan.initialPreCreated.lookaheadMs)} a new table creates the whole burst before the second; the ${plan.initialPreCreated.earlySurfacingSlices.toLocaleString('en-US')} slices created more than 15 minutes ahead surface early and are hidden again once (a receive and a visibility change, shared by a batch of 10).`,
  );

  const st = report.settlement;
  section(
    `6. Settlement: ${st.merchants.toLocaleString('en-US')} payouts in ${st.chunks} chunked commits, wires through the outbox to a local mock bank`,
  );
  lines.push(
    table([
      ['', 'WRU / payout', 'RRU / payout', '$ / M payouts', 'seconds here', `1,200 payouts here`, '1,200 at the ceiling'],
      ['chunked commits', fmt(st.commitPerPayout.write), fmt(st.commitPerPayout.read), '', st.commitSeconds, '', ''],
      ['outbox deliveries', fmt(st.deliveryPerPayout.write), fmt(st.deliveryPerPayout.read), '', st.wireSeconds, '', ''],
      [
        'settlement',
        fmt(st.writeUnitsPerPayout),
        fmt(st.readUnitsPerPayout),
        usd(st.usdPerMillionPayouts),
        round1(st.commitSeconds + st.wireSeconds),
        `${st.secondsFor1200} s`,
        `${st.ceilingSecondsFor1200} s (${st.itemWrites.toLocaleString('en-US')} item writes at ${fmt(report.ceiling.dynamoWritesPerSecond)}/s)`,
      ],
    ]),
  );
  lines.push(
    '',
    `${st.acceptedWires.toLocaleString('en-US')} wires accepted by the bank; ${st.transactions} transactions, ${st.transactItems.toLocaleString('en-US')} items. Dollars are DynamoDB request units only (the worker's Lambda time is the job's own).`,
  );

  const bundle = report.workerBundleMemory;
  section(
    `7. Worker memory: the synthesized worker bundle (${bundle.bundleKb.toLocaleString('en-US')} KB) in a bare Node process, one SQS batch of ${bundle.messages} due at the next second, no-op handler`,
  );
  lines.push(
    table([
      [
        'bare node',
        'bundle loaded',
        'after the batch',
        'peak (maxRSS)',
        'heap used / total',
        `+ Lambda runtime (${LAMBDA_RUNTIME_ALLOWANCE_MB} MB)`,
        'chosen',
        'committed',
        'invocation',
      ],
      [
        `${bundle.bareRssMb} MB`,
        `${bundle.loadedRssMb} MB`,
        `${bundle.rssMb} MB`,
        `${bundle.maxRssMb} MB`,
        `${bundle.heapUsedMb} / ${bundle.heapTotalMb} MB`,
        `${bundle.lambdaEstimateMb} MB`,
        `${bundle.chosenMb} MB`,
        `${bundle.committed} of ${bundle.messages}`,
        `${bundle.invocationMs} ms`,
      ],
    ]),
  );
  lines.push(
    '',
    `The burst's worker processes (TypeScript loader, 4 batches in flight) peaked at ${m.peakRssMb} MB; the size is chosen from the bundle's peak with the runtime's allowance and 25 % headroom (workerMemorySize overrides it).`,
  );

  section('Targets (issues 11 and 32)');
  lines.push(table([['target', 'measured', ''], ...report.targets.map((t) => [t.target, t.measured, t.met ? 'met' : 'NOT MET'])]));
  return lines.join('\n');
}

export function fmt(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 1 ? 3 : 2);
}

function usd(value: number): string {
  return `$${value.toFixed(value < 0.1 ? 4 : 3)}`;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** `960000` → `16m`. */
function minutes(ms: number): string {
  return `${Math.round(ms / 60_000)}m`;
}
