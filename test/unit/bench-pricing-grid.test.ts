import { describe, expect, it } from 'vitest';
import { cronfenceUsdPerMillion } from '../../tools/bench/cost.ts';
import { addScaled, type PerExecution } from '../../tools/bench/per-execution.ts';
import { GRID_JOB_SECONDS, GRID_LEASES, pricingGrid, pricingGridMarkdown } from '../../tools/bench/pricing-grid.ts';

const zero: PerExecution = {
  dynamoWriteRequests: 0,
  dynamoReadRequests: 0,
  transactWriteRequests: 0,
  transactItems: 0,
  writeRequestUnits: 0,
  baseWriteRequestUnits: 0,
  readRequestUnits: 0,
  indexWriteUnits: {},
  wheelWriteUnits: 0,
  sqsRequests: 0,
  sqsSends: 0,
  sqsReceives: 0,
  sqsDeletes: 0,
  sqsVisibilityChanges: 0,
  sqsExtensions: 0,
  emptyReceives: 0,
  heartbeats: 0,
  eventRequests: 0,
  eventEntries: 0,
  receivesWithMessages: 0,
};
const sparse: PerExecution = { ...zero, dynamoWriteRequests: 3, writeRequestUnits: 3, readRequestUnits: 2, sqsRequests: 4 };
const burst: PerExecution = { ...zero, dynamoWriteRequests: 2, writeRequestUnits: 2, readRequestUnits: 1.5, sqsRequests: 0.4 };
const lease = { leaseMs: 4000, heartbeatMs: 1000 };

describe('the wait for the second', () => {
  it('bills each invocation the wait it is given, none within the second', () => {
    const exact = cronfenceUsdPerMillion(sparse, 1, lease, { workerMemoryMb: 256, waitSecondsPerInvocation: 0.4 });
    const within = cronfenceUsdPerMillion(sparse, 1, lease, { workerMemoryMb: 256, waitSecondsPerInvocation: 0 });
    expect(exact.lambdaWait).toBeCloseTo(0.25 * 0.4 * 13.3334, 3); // 256 MB × 0.4 s, one invocation
    expect(within.lambdaWait).toBe(0);
    expect(exact.overhead - within.overhead).toBeCloseTo(exact.lambdaWait, 4);
  });
});

describe('addScaled', () => {
  it('takes a per-scan part out of a share, field by field, never below 0', () => {
    const measured = { ...zero, dynamoWriteRequests: 3, writeRequestUnits: 3, indexWriteUnits: { 'slices/sweep': 0.5 } };
    const perScan = { ...zero, dynamoWriteRequests: 2, writeRequestUnits: 2, readRequestUnits: 1, indexWriteUnits: { 'slices/sweep': 1 } };
    const share = addScaled(measured, perScan, -0.5);
    expect(share.dynamoWriteRequests).toBe(2);
    expect(share.writeRequestUnits).toBe(2);
    expect(share.readRequestUnits).toBe(0); // 0 − 0.5, clamped
    expect(share.indexWriteUnits).toEqual({ 'slices/sweep': 0 });
  });
});

describe('pricing grid', () => {
  const rows = pricingGrid({
    burst: { perExecution: burst, invocationsPerExecution: 0.1, exactWaitSeconds: 0.5 },
    sparse: { perExecution: sparse, invocationsPerExecution: 1, exactWaitSeconds: 0.45 },
    workerMemoryMb: 256,
  });

  it('has a row for each density, precision, job length and lease', () => {
    expect(rows).toHaveLength(2 * 2 * GRID_JOB_SECONDS.length * GRID_LEASES.length);
    expect(new Set(rows.map((r) => `${r.density}/${r.precision}/${r.jobSeconds}/${r.leaseMs}`)).size).toBe(rows.length);
  });

  it('prices each row with the cost model: the exact second bills the wait, within the second does not (modelled)', () => {
    const row = (density: string, precision: string, jobSeconds: number, leaseMs = 4000) =>
      rows.find((r) => r.density === density && r.precision === precision && r.jobSeconds === jobSeconds && r.leaseMs === leaseMs);
    const sparseExact = row('sparse', 'exact', 1);
    const sparseWithin = row('sparse', 'within-second', 1);
    expect(sparseExact?.overheadUsd).toBe(
      cronfenceUsdPerMillion(sparse, 1, lease, { workerMemoryMb: 256, invocationsPerExecution: 1, waitSecondsPerInvocation: 0.45 })
        .overhead,
    );
    expect(sparseExact!.overheadUsd - sparseWithin!.overheadUsd).toBeCloseTo(0.25 * 0.45 * 13.3334, 3);
    expect(sparseWithin?.basis).toBe('modelled');
    expect(sparseExact?.basis).toBe('measured counts');
    // A long job renews under the default lease, far less under a long one.
    expect(row('burst', 'exact', 60)!.overheadUsd).toBeGreaterThan(row('burst', 'exact', 60, 60_000)!.overheadUsd);
    // EventBridge Scheduler beside it: its $1 and the Lambda request, idempotency's 2 WRU on top.
    expect(row('burst', 'exact', 1)!.schedulerIdempotencyTotalUsd - row('burst', 'exact', 1)!.schedulerTotalUsd).toBeCloseTo(1.25, 3); // totals are rounded to 4 places
  });

  it('renders as a Markdown table', () => {
    const markdown = pricingGridMarkdown(rows).split('\n');
    expect(markdown).toHaveLength(rows.length + 2);
    expect(markdown[1]).toMatch(/^\| --- \|/);
    expect(markdown[2]).toContain('| burst | exact second | 0.1 s | 4 s / 1 s |');
  });
});
