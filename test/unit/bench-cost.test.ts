import { describe, expect, it } from 'vitest';
import {
  chooseWorkerMemoryMb,
  cronfenceUsdPerMillion,
  heartbeatsFor,
  heartbeatUsdPerMillion,
  schedulerUsdPerMillion,
} from '../../tools/bench/cost.ts';
import type { PerExecution } from '../../tools/bench/per-execution.ts';
import { planThroughput, preEnqueueLookaheadMs } from '../../tools/bench/capacity-plan.ts';

const happy = { writeRequestUnits: 6, readRequestUnits: 0.5, sqsRequests: 0.3, eventEntries: 1 } as PerExecution;

describe('dollars per million executions', () => {
  it('counts one heartbeat per interval the job is still running', () => {
    expect(heartbeatsFor(1, 1000)).toBe(1);
    expect(heartbeatsFor(45, 1000)).toBe(45);
    expect(heartbeatsFor(45, 15_000)).toBe(3);
    expect(heartbeatsFor(0.5, 1000)).toBe(0);
  });

  it('prices the wait for the second by the start precision: none for within-second, the rest unchanged', () => {
    const lease = { leaseMs: 4000, heartbeatMs: 1000 };
    const sparse = { ...happy, sqsRequests: 4, eventEntries: 0 };
    const exact = cronfenceUsdPerMillion(sparse, 1, lease, { workerMemoryMb: 256 });
    const within = cronfenceUsdPerMillion(sparse, 1, lease, { workerMemoryMb: 256, startPrecision: 'within-second' });
    expect(exact.lambdaWait).toBeCloseTo(0.25 * 0.5 * 13.3334, 3); // 256 MB × 0.5 s, one invocation per execution
    expect(within.lambdaWait).toBe(0);
    expect(within.overhead).toBeCloseTo(exact.overhead - exact.lambdaWait, 3);
    expect({ ...within, lambdaWait: 0, total: 0, overhead: 0 }).toEqual({ ...exact, lambdaWait: 0, total: 0, overhead: 0 });
  });

  it('prices a 1-second job by hand, with the handler apart from the overhead', () => {
    const cost = cronfenceUsdPerMillion(happy, 1, { leaseMs: 4000, heartbeatMs: 1000 }, { workerMemoryMb: 512 });
    expect(cost.dynamoWrites).toBeCloseTo((6 + 1) * 0.625, 4); // 6 WRU (indexes included) + one renewal
    expect(cost.dynamoReads).toBeCloseTo(0.0625, 4);
    expect(cost.sqs).toBeCloseTo((0.3 + 1) * 0.4, 4); // the measured mix (claim-time changes in it) + one heartbeat
    expect(cost.lambdaRequests).toBeCloseTo(0.2, 4);
    expect(cost.lambdaWait).toBeCloseTo(0.5 * 0.5 * 13.3334, 3); // 512 MB × 0.5 s wait
    expect(cost.lambdaCompute).toBeCloseTo(0.5 * 1 * 13.3334, 3); // 512 MB × the 1 s handler
    expect(cost.events).toBeCloseTo(1, 4);
    expect(cost.total).toBeCloseTo(4.375 + 0.0625 + 0.52 + 0.2 + 3.33335 + 6.6667 + 1, 3);
    expect(cost.overhead).toBeCloseTo(cost.total - cost.lambdaCompute, 4);
  });

  it('shares an invocation and its wait among the executions of a batch', () => {
    const alone = cronfenceUsdPerMillion(happy, 1, { leaseMs: 4000, heartbeatMs: 1000 }, { workerMemoryMb: 256 });
    const batched = cronfenceUsdPerMillion(
      happy,
      1,
      { leaseMs: 4000, heartbeatMs: 1000 },
      { workerMemoryMb: 256, invocationsPerExecution: 0.1 },
    );
    expect(batched.lambdaRequests).toBeCloseTo(alone.lambdaRequests / 10, 6);
    expect(batched.lambdaWait).toBeCloseTo(alone.lambdaWait / 10, 3); // each figure is rounded to 4 places
    expect(batched.lambdaCompute).toBeCloseTo(alone.lambdaCompute, 6);
  });

  it('chooses the smallest Lambda memory that holds the peak resident set with a quarter to spare', () => {
    expect(chooseWorkerMemoryMb(90)).toBe(128);
    expect(chooseWorkerMemoryMb(120)).toBe(256);
    expect(chooseWorkerMemoryMb(300)).toBe(512);
    expect(chooseWorkerMemoryMb(5000)).toBe(1024);
  });

  it("prices EventBridge Scheduler plus the Lambda it invokes, and Powertools idempotency's two writes", () => {
    expect(schedulerUsdPerMillion(1, { memoryMb: 512 }).total).toBeCloseTo(1 + 0.2 + 0.5 * 13.3334, 3);
    expect(schedulerUsdPerMillion(1, { memoryMb: 512 }).overhead).toBeCloseTo(1.2, 4);
    expect(schedulerUsdPerMillion(1, { memoryMb: 512, idempotency: true }).overhead).toBeCloseTo(1.2 + 2 * 0.625, 4);
    expect(schedulerUsdPerMillion(45, { memoryMb: 512 }).total).toBeCloseTo(1 + 0.2 + 0.5 * 45 * 13.3334, 2);
  });

  it('prices heartbeats: a renewal (1 WRU) and a visibility extension (1 SQS request) each', () => {
    expect(heartbeatUsdPerMillion(45, { leaseMs: 4000, heartbeatMs: 1000 })).toBeCloseTo(45 * 1.025, 6);
    expect(heartbeatUsdPerMillion(45, { leaseMs: 60_000, heartbeatMs: 15_000 })).toBeCloseTo(3 * 1.025, 6);
  });
});

describe('capacity plan', () => {
  const mix = { scannerWru: 4, workerWru: 6, shardKeyedWruPerSlice: { 'slices/sweep': 4, 'jobs/due': 2 } };

  it("at a new table's 4,000 WRU/s, lookahead 16 minutes (every message delayed to its second)", () => {
    expect(planThroughput(mix, 4000, 1_000_000)).toEqual({
      tableWruPerSecond: 4000,
      lookaheadMs: 960_000,
      slicesPerSecond: 400,
      shardsNeeded: 2, // 400 slices/s × 4 sweep units / 1,000 per partition
      hottestKey: 'slices/sweep',
      burstSlices: 1_000_000,
      burstAtSecondSeconds: 1500,
      preEnqueueSeconds: 1000,
      preEnqueueFitsLookahead: false,
      earlySurfacingSlices: 0,
      burstColdSeconds: 2500,
      wruPerSecondToPreEnqueue: 4939, // 4,000,000 / 810 s
      // 3,600,000 of the scanner's 4,000,000 WRU before the second; then 400,000 + 6,000,000 at 4,000/s.
      allCommittedAfterSecondS: 1600,
      // 10,000,000 WRU within 900 + 300 s, and the workers' 6,000,000 within 300 s; the same for 600 s.
      wruPerSecondWithin: { fiveMinutes: 20_000, tenMinutes: 10_000 },
    });
  });

  it('at 40,000 WRU/s', () => {
    const plan = planThroughput(mix, 40_000, 1_000_000);
    expect(plan.shardsNeeded).toBe(16);
    expect(plan.burstAtSecondSeconds).toBe(150);
    expect(plan.preEnqueueFitsLookahead).toBe(true);
    // The scanner's part all before the second: the workers' 6,000,000 WRU at 40,000/s.
    expect(plan.allCommittedAfterSecondS).toBe(150);
  });

  it('finds the lookahead that pre-enqueues a burst, if any up to an hour does', () => {
    // 100 s of scanning and a tick, in whole minutes.
    expect(preEnqueueLookaheadMs(1_000_000, 4, 40_000)).toBe(180_000);
    // 1,000 s and a tick: 18 minutes.
    expect(preEnqueueLookaheadMs(1_000_000, 4, 4000)).toBe(1_080_000);
    // 4,000 s is more than an hour.
    expect(preEnqueueLookaheadMs(1_000_000, 16, 4000)).toBeUndefined();
  });

  it('a new table with that lookahead: the scanner done before the second, only the workers after', () => {
    const plan = planThroughput(mix, 4000, 1_000_000, 1_080_000);
    expect(plan.preEnqueueFitsLookahead).toBe(true);
    // The workers' 6,000,000 WRU at 4,000/s.
    expect(plan.allCommittedAfterSecondS).toBe(1500);
    // The scan starts 17 minutes (1,020 s) before; the first 120 s of it, 4,000 WRU/s ÷ 4 = 1,000 slices/s, are more than 900 s ahead.
    expect(plan.earlySurfacingSlices).toBe(120_000);
    expect(plan.wruPerSecondToPreEnqueue).toBe(4358); // 4,000,000 / (1,020 s × 0.9)
  });
});
