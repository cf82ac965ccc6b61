/**
 * The table a team prices from (docs/bench.md, "Pricing by density,
 * precision, job length and lease"): dollars per million executions by
 * schedule density (burst, sparse), start precision (on the exact second,
 * with the wait; within the second, without it), job length and lease, beside
 * EventBridge Scheduler and EventBridge Scheduler with Powertools idempotency.
 * Every figure comes from the cost model (cost.ts) and a run's measured
 * per-execution counts; the bench prints it, and
 *
 *   node --import tsx tools/bench/pricing-grid.ts .cronfence/bench/report.json
 *
 * prints it as the doc's Markdown from a report.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cronfenceUsdPerMillion, schedulerUsdPerMillion, MEAN_WAIT_FOR_SECOND_S, type HeartbeatCost, type LeaseSettings } from './cost.ts';
import type { PerExecution } from './per-execution.ts';

export const GRID_JOB_SECONDS = [0.1, 1, 10, 60] as const;
/** The default lease and a long one: what the lease choice changes is the renewals of a long job. */
export const GRID_LEASES: readonly LeaseSettings[] = [
  { leaseMs: 4000, heartbeatMs: 1000 },
  { leaseMs: 60_000, heartbeatMs: 15_000 },
];

export type Density = 'burst' | 'sparse';
export type StartPrecision = 'exact' | 'within-second';

/** One density's measured mix: per execution, the worker invocations, and the wait each invocation is billed. */
export interface DensityMix {
  readonly perExecution: PerExecution;
  readonly invocationsPerExecution: number;
  /** Seconds an invocation waits for its second at exact precision (sparse: measured; burst: the model's half second). */
  readonly exactWaitSeconds: number;
}

export interface PricingInputs {
  readonly burst: DensityMix;
  readonly sparse: DensityMix;
  readonly heartbeat?: HeartbeatCost;
  readonly workerMemoryMb: number;
}

export interface PricingRow {
  readonly density: Density;
  readonly precision: StartPrecision;
  readonly jobSeconds: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly overheadUsd: number;
  readonly totalUsd: number;
  readonly schedulerTotalUsd: number;
  readonly schedulerIdempotencyTotalUsd: number;
  /** Within the second, the wait is removed from the model: not measured until the bench runs that precision. */
  readonly basis: 'measured counts' | 'modelled';
}

export function pricingGrid(inputs: PricingInputs): PricingRow[] {
  const rows: PricingRow[] = [];
  for (const density of ['burst', 'sparse'] as const) {
    const mix = inputs[density];
    for (const precision of ['exact', 'within-second'] as const) {
      for (const jobSeconds of GRID_JOB_SECONDS) {
        for (const lease of GRID_LEASES) {
          const cost = cronfenceUsdPerMillion(mix.perExecution, jobSeconds, lease, {
            heartbeat: inputs.heartbeat,
            workerMemoryMb: inputs.workerMemoryMb,
            invocationsPerExecution: mix.invocationsPerExecution,
            waitSecondsPerInvocation: precision === 'exact' ? mix.exactWaitSeconds : 0,
          });
          rows.push({
            density,
            precision,
            jobSeconds,
            leaseMs: lease.leaseMs,
            heartbeatMs: lease.heartbeatMs,
            overheadUsd: cost.overhead,
            totalUsd: cost.total,
            schedulerTotalUsd: schedulerUsdPerMillion(jobSeconds, { memoryMb: inputs.workerMemoryMb }).total,
            schedulerIdempotencyTotalUsd: schedulerUsdPerMillion(jobSeconds, { memoryMb: inputs.workerMemoryMb, idempotency: true }).total,
            basis: precision === 'exact' ? 'measured counts' : 'modelled',
          });
        }
      }
    }
  }
  return rows;
}

export const PRICING_GRID_HEADER = [
  'density',
  'start',
  'job',
  'lease / heartbeat',
  'cronfence overhead',
  'cronfence total',
  'EventBridge Scheduler',
  '+ idempotency',
  'basis',
] as const;

export function pricingGridCells(row: PricingRow): string[] {
  return [
    row.density,
    row.precision === 'exact' ? 'exact second' : 'within the second',
    `${row.jobSeconds} s`,
    `${row.leaseMs / 1000} s / ${row.heartbeatMs / 1000} s`,
    dollars(row.overheadUsd),
    dollars(row.totalUsd),
    dollars(row.schedulerTotalUsd),
    dollars(row.schedulerIdempotencyTotalUsd),
    row.basis,
  ];
}

export function pricingGridMarkdown(rows: readonly PricingRow[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(PRICING_GRID_HEADER), line(PRICING_GRID_HEADER.map(() => '---')), ...rows.map((row) => line(pricingGridCells(row)))].join(
    '\n',
  );
}

function dollars(value: number): string {
  return `$${value.toFixed(2)}`;
}

/** The burst's half-second model of the wait, for the grid's burst rows. */
export const BURST_EXACT_WAIT_SECONDS = MEAN_WAIT_FOR_SECOND_S;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? '.cronfence/bench/report.json';
  const report = JSON.parse(readFileSync(file, 'utf8')) as { costs: { pricingGrid: PricingRow[] } };
  process.stdout.write(`${pricingGridMarkdown(report.costs.pricingGrid)}\n`);
}
