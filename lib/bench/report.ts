/**
 * The bench's report: report.json's shape (a documented interface,
 * docs/bench.md: keep fields additive), the targets of issue 5 checked
 * against it, and its terminal rendering.
 */
import { table } from '../local/format.ts';
import type { BurstResult, HeartbeatRound } from './burst.ts';
import type { BenchSizes, CapacityPlanReport } from './run-bench.ts';
import type { CeilingResult } from './ceiling.ts';
import type { CostBreakdown, LeaseSettings } from './cost.ts';
import type { DensityResult } from './density.ts';
import type { PerExecution } from './per-execution.ts';
import type { PriceTable } from './price-table.ts';

export interface LeaseChoiceCost extends LeaseSettings {
  /** A standby takes over within about one lease after the holder's last heartbeat. */
  readonly failoverWithinS: number;
  readonly heartbeatsPer45sJob: number;
  readonly heartbeatUsdPerMillion45s: number;
  readonly totalUsdPerMillion45s: number;
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
  readonly burst: Omit<BurstResult, 'meter' | 'scannerMeter' | 'workerMeter' | 'heartbeatRounds'> & { readonly requests: Record<string, number> };
  readonly ceiling: CeilingResult & { readonly slicesPerSecond: number };
  /** End-to-end burst throughput ÷ the ceiling's slices per second. */
  readonly ceilingRatio: number;
  /** Happy path, per committed burst execution. */
  readonly perExecution: PerExecution;
  readonly perExecutionByRole: { readonly scanner: PerExecution; readonly worker: PerExecution };
  readonly heartbeats: { readonly rounds: readonly HeartbeatRound[]; readonly flatInJobs: boolean };
  /** Dollars per million executions of a 1-second job on cronfence (headline). */
  readonly usdPerMillion: number;
  readonly costs: {
    readonly cronfence1s: CostBreakdown;
    readonly cronfence45s: CostBreakdown;
    readonly eventBridgeScheduler1s: CostBreakdown;
    readonly eventBridgeScheduler45s: CostBreakdown;
    readonly leaseChoices: readonly LeaseChoiceCost[];
  };
  readonly capacityPlan: CapacityPlanReport;
  readonly prices: PriceTable;
  readonly targets: readonly TargetCheck[];
  readonly chart: string;
}

export function checkTargets(report: Omit<BenchReport, 'targets' | 'chart'>): TargetCheck[] {
  const p = report.perExecution;
  const levels = report.density.levels;
  const first = levels[0];
  const last = levels.at(-1);
  const rounds = report.heartbeats.rounds;
  const checks: TargetCheck[] = [
    { target: 'DynamoDB write requests per execution ≤ 3', measured: fmt(p.dynamoWriteRequests), met: p.dynamoWriteRequests <= 3 },
    { target: 'write request units per execution ≤ 6', measured: fmt(p.writeRequestUnits), met: p.writeRequestUnits <= 6 },
    { target: 'SQS requests per execution ≤ 1', measured: fmt(p.sqsRequests), met: p.sqsRequests <= 1 },
    {
      target: 'heartbeat cost per job does not grow with the number of jobs',
      measured: rounds.map((r) => `${r.jobs} job(s) at once: ${r.renewalsPerJob} renewals per job`).join('; '),
      met: report.heartbeats.flatInJobs,
    },
    { target: 'end-to-end burst throughput ≥ 50% of the emulator ceiling', measured: `${Math.round(report.ceilingRatio * 100)}%`, met: report.ceilingRatio >= 0.5 },
  ];
  if (first && last && levels.length > 1) {
    checks.push(
      {
        target: 'scanner memory flat in registered schedules',
        measured: `peak RSS ${first.scannerPeakRssMb} MB at ${first.schedules.toLocaleString('en-US')} → ${last.scannerPeakRssMb} MB at ${last.schedules.toLocaleString('en-US')}`,
        met: last.scannerPeakRssMb <= first.scannerPeakRssMb * 1.2 + 10,
      },
      {
        target: 'items touched per due slice flat in registered schedules',
        measured: `${first.itemsTouchedPerDueSlice} → ${last.itemsTouchedPerDueSlice}`,
        met: last.itemsTouchedPerDueSlice <= first.itemsTouchedPerDueSlice * 1.1 + 0.05,
      },
    );
  }
  return checks;
}

export function renderReport(report: BenchReport): string {
  const lines: string[] = [];
  const section = (title: string): void => void lines.push('', title);
  lines.push(`cronfence bench (${report.mode}) — ${report.wallSeconds} s, against ${report.endpoint}`);

  section(`1. Density: one scan window over ${report.density.shards} shards (${report.settings.duePerLevel} schedules due in the window at each level)`);
  lines.push(
    table([
      ['schedules', 'due slices', 'items read', 'items written', 'items/due slice', 'Dynamo req/due slice', 'ms/shard mean', 'ms/shard max', 'scanner RSS (idle → peak)', 'heap peak'],
      ...report.density.levels.map((l) => [
        l.schedules.toLocaleString('en-US'),
        l.slicesCreated,
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
  section(`2. Burst: ${b.slices.toLocaleString('en-US')} slices due at one second, ${b.shards} shards, ${b.scanners} scanner and ${b.workers} worker processes × ${report.settings.workerBatches} batches in flight (scan requested ${b.scanRequestedS} s before)`);
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

  const c = report.ceiling;
  section('3. Ceiling, same run: plain conditional PutItem + SendMessageBatch from one process');
  lines.push(
    table([
      ['requests', 'concurrency', 'seconds', 'writes/s', 'batches/s', 'ceiling slices/s', 'ours slices/s', 'ratio'],
      [`${c.dynamoWrites} writes + ${c.sendBatches} batches`, c.concurrency, c.seconds, c.dynamoWritesPerSecond, c.sendBatchesPerSecond, c.slicesPerSecond, b.throughputSlicesPerSecond, `${Math.round(report.ceilingRatio * 100)}%`],
    ]),
  );

  const p = report.perExecution;
  section(`4. Requests per execution (burst happy path, ${b.committed} executions; heartbeats and empty receives apart)`);
  lines.push(
    table([
      ['kind', 'per execution', 'scanner', 'worker'],
      ...(
        [
          ['DynamoDB write requests', 'dynamoWriteRequests'],
          ['  of which TransactWriteItems', 'transactWriteRequests'],
          ['  items in those transactions', 'transactItems'],
          ['DynamoDB read requests', 'dynamoReadRequests'],
          ['write request units (base tables)', 'writeRequestUnits'],
          ['read request units', 'readRequestUnits'],
          ['SQS requests (send+receive+delete+visibility)', 'sqsRequests'],
          ['  sends', 'sqsSends'],
          ['  receives with messages', 'sqsReceives'],
          ['  deletes', 'sqsDeletes'],
          ['  visibility changes', 'sqsVisibilityChanges'],
          ['empty receives (idle pollers)', 'emptyReceives'],
          ['heartbeats', 'heartbeats'],
          ['EventBridge PutEvents requests', 'eventRequests'],
          ['EventBridge event entries', 'eventEntries'],
        ] as const
      ).map(([label, key]) => [label, fmt(p[key]), fmt(report.perExecutionByRole.scanner[key]), fmt(report.perExecutionByRole.worker[key])]),
      ...Object.entries(p.indexWriteUnits).map(([index, units]) => [`GSI write units ${index}`, fmt(units), fmt(report.perExecutionByRole.scanner.indexWriteUnits[index] ?? 0), fmt(report.perExecutionByRole.worker.indexWriteUnits[index] ?? 0)]),
    ]),
  );
  lines.push('', table([['request', 'count', 'per execution'], ...Object.entries(b.requests).filter(([, n]) => n > 0).sort(([x], [y]) => x.localeCompare(y)).map(([name, n]) => [name, n, (n / Math.max(1, b.committed)).toFixed(3)])]));
  section('Heartbeats (jobs holding their lease)');
  lines.push(
    table([
      ['jobs at once', 'hold', 'renewals/job', 'visibility changes/job', 'renewals/job-second', 'WRU/renewal'],
      ...report.heartbeats.rounds.map((r) => [r.jobs, `${r.holdMs / 1000} s`, r.renewalsPerJob, r.visibilityChangesPerJob, r.renewalsPerJobSecond, r.writeUnitsPerRenewal]),
    ]),
  );

  const k = report.costs;
  section(`Dollars per million executions (us-east-1, prices of ${report.prices.asOf}; Lambda 512 MB Arm, one invocation per execution)`);
  lines.push(
    table([
      ['', 'DynamoDB W', 'DynamoDB R', 'SQS', 'Lambda req', 'Lambda GB-s', 'EventBridge', 'Scheduler', 'total'],
      ...(
        [
          ['cronfence, 1 s job', k.cronfence1s],
          ['EventBridge Scheduler + Lambda, 1 s job', k.eventBridgeScheduler1s],
          ['cronfence, 45 s job', k.cronfence45s],
          ['EventBridge Scheduler + Lambda, 45 s job', k.eventBridgeScheduler45s],
        ] as const
      ).map(([label, cost]) => [label, usd(cost.dynamoWrites), usd(cost.dynamoReads), usd(cost.sqs), usd(cost.lambdaRequests), usd(cost.lambdaCompute), usd(cost.events), usd(cost.scheduler), usd(cost.total)]),
    ]),
  );
  lines.push(
    '',
    table([
      ['lease / heartbeat', 'failover within', 'heartbeats in a 45 s job', 'heartbeats $/M', 'cronfence 45 s job $/M'],
      ...k.leaseChoices.map((l) => [`${l.leaseMs / 1000} s / ${l.heartbeatMs / 1000} s`, `~${l.failoverWithinS} s`, l.heartbeatsPer45sJob, usd(l.heartbeatUsdPerMillion45s), usd(l.totalUsdPerMillion45s)]),
    ]),
  );

  const plan = report.capacityPlan;
  section(`5. Capacity plan (per slice: scanner ${fmt(plan.mix.scannerWru)} WRU, worker ${fmt(plan.mix.workerWru)} WRU; shard-keyed GSI units ${Object.entries(plan.mix.indexWruPerSlice).map(([i, u]) => `${i} ${fmt(u)}`).join(', ')})`);
  lines.push(
    table([
      ['table write throughput', 'slices/s', 'shards needed', 'hottest index', `${plan.burstSlices.toLocaleString('en-US')}-slice burst at the second`, 'pre-enqueue (scanner part)', 'fits 900 s delay', 'nothing pre-enqueued', 'WRU/s to pre-enqueue'],
      ...[plan.initial, plan.warm].map((t) => [
        `${t.tableWruPerSecond.toLocaleString('en-US')} WRU/s`,
        t.slicesPerSecond,
        t.shardsNeeded,
        t.hottestIndex,
        `${t.burstAtSecondSeconds} s`,
        `${t.preEnqueueSeconds} s`,
        t.preEnqueueFitsDelayWindow ? 'yes' : 'no',
        `${t.burstColdSeconds} s`,
        t.wruPerSecondToPreEnqueue.toLocaleString('en-US'),
      ]),
    ]),
  );

  section('Targets (issue 5)');
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
