/** How big the bench's parts are: the defaults, the CI smoke test's, and what the flags change. */
export interface BenchSizes {
  /** Registered schedules at each density level, ascending. */
  readonly schedules: readonly number[];
  readonly duePerLevel: number;
  readonly burst: number;
  /** Slices of the sparse run: one a second, each its own worker invocation (sparse.ts). */
  readonly sparse: number;
  readonly shards: number;
  readonly scanners: number;
  readonly workers: number;
  /** SQS batches each worker process works on at once (a Lambda event source's concurrency, per replica). */
  readonly workerBatches: number;
  readonly heartbeatHoldMs: number;
  readonly heartbeatJobs: number;
  /** Merchants in the settlement row's one settlement (settlement-cost.ts). */
  readonly settlementMerchants: number;
}

/**
 * Defaults sized so that `npm run bench` ends in under 10 minutes on a
 * 2-core machine against moto, which serves DynamoDB one request at a time
 * (docs/bench.md gives the measurements behind them). The sizes are
 * options: --schedules 10000,100000,1000000 --burst 20000.
 */
export const FULL_SIZES: BenchSizes = {
  schedules: [10_000, 100_000],
  duePerLevel: 200,
  burst: 1000,
  sparse: 60,
  shards: 8,
  scanners: 2,
  workers: 2,
  workerBatches: 4,
  heartbeatHoldMs: 4000,
  heartbeatJobs: 8,
  settlementMerchants: 1200,
};

/** The CI smoke test's sizes: every figure, in about a minute. */
export const QUICK_SIZES: BenchSizes = {
  schedules: [1000, 4000],
  duePerLevel: 40,
  burst: 200,
  sparse: 20,
  shards: 4,
  scanners: 1,
  workers: 2,
  workerBatches: 4,
  heartbeatHoldMs: 2500,
  heartbeatJobs: 4,
  settlementMerchants: 1200,
};
