import { describe, expect, it } from 'vitest';
import { cronfenceUsdPerMillion, heartbeatsFor, heartbeatUsdPerMillion, schedulerUsdPerMillion } from '../../lib/bench/cost.ts';
import type { PerExecution } from '../../lib/bench/per-execution.ts';
import { planThroughput, preEnqueueLookaheadMs } from '../../lib/bench/capacity-plan.ts';

const happy = { writeRequestUnits: 6, readRequestUnits: 0.5, sqsRequests: 0.3, eventEntries: 1 } as PerExecution;

describe('dollars per million executions', () => {
  it('counts one heartbeat per interval the job is still running', () => {
    expect(heartbeatsFor(1, 1000)).toBe(1);
    expect(heartbeatsFor(45, 1000)).toBe(45);
    expect(heartbeatsFor(45, 15_000)).toBe(3);
    expect(heartbeatsFor(0.5, 1000)).toBe(0);
  });

  it('prices a 1-second job by hand', () => {
    const cost = cronfenceUsdPerMillion(happy, 1, { leaseMs: 4000, heartbeatMs: 1000 });
    expect(cost.dynamoWrites).toBeCloseTo((6 + 1) * 0.625, 4); // 6 WRU + one renewal
    expect(cost.dynamoReads).toBeCloseTo(0.0625, 4);
    expect(cost.sqs).toBeCloseTo((0.3 + 1 + 1) * 0.4, 4); // mix + claim-time visibility on Lambda + one heartbeat
    expect(cost.lambdaRequests).toBeCloseTo(0.2, 4);
    expect(cost.lambdaCompute).toBeCloseTo(0.5 * 1.5 * 13.3334, 3); // 512 MB × (1 s + 0.5 s wait)
    expect(cost.events).toBeCloseTo(1, 4);
    expect(cost.total).toBeCloseTo(4.375 + 0.0625 + 0.92 + 0.2 + 10.00005 + 1, 3);
  });

  it('bills index writes as write units', () => {
    const withIndexes = { ...happy, indexWriteUnits: { 'slices/sweep': 4.5, 'jobs/due': 2 } } as PerExecution;
    const cost = cronfenceUsdPerMillion(withIndexes, 1, { leaseMs: 4000, heartbeatMs: 1000 });
    expect(cost.dynamoWrites).toBeCloseTo((6 + 6.5 + 1) * 0.625, 4);
  });

  it('prices EventBridge Scheduler plus the Lambda it invokes', () => {
    expect(schedulerUsdPerMillion(1).total).toBeCloseTo(1 + 0.2 + 0.5 * 13.3334, 3);
    expect(schedulerUsdPerMillion(45).total).toBeCloseTo(1 + 0.2 + 0.5 * 45 * 13.3334, 2);
  });

  it('prices heartbeats: a renewal (1 WRU) and a visibility extension (1 SQS request) each', () => {
    expect(heartbeatUsdPerMillion(45, { leaseMs: 4000, heartbeatMs: 1000 })).toBeCloseTo(45 * 1.025, 6);
    expect(heartbeatUsdPerMillion(45, { leaseMs: 60_000, heartbeatMs: 15_000 })).toBeCloseTo(3 * 1.025, 6);
  });
});

describe('capacity plan', () => {
  const mix = { scannerWru: 4, workerWru: 6, indexWruPerSlice: { 'slices/sweep': 4, 'jobs/due': 2 } };

  it('at a new table\'s 4,000 WRU/s', () => {
    expect(planThroughput(mix, 4000, 1_000_000)).toEqual({
      tableWruPerSecond: 4000,
      slicesPerSecond: 400,
      shardsNeeded: 2, // 400 slices/s × 4 sweep units / 1,000 per partition
      hottestIndex: 'slices/sweep',
      burstSlices: 1_000_000,
      burstAtSecondSeconds: 1500,
      preEnqueueSeconds: 1000,
      preEnqueueFitsDelayWindow: false,
      burstColdSeconds: 2500,
      wruPerSecondToPreEnqueue: 4939, // 4,000,000 / 810 s
    });
  });

  it('at 40,000 WRU/s', () => {
    const plan = planThroughput(mix, 40_000, 1_000_000);
    expect(plan.shardsNeeded).toBe(16);
    expect(plan.burstAtSecondSeconds).toBe(150);
    expect(plan.preEnqueueFitsDelayWindow).toBe(true);
  });

  it('finds the lookahead that pre-enqueues a burst, if any fits 900 s', () => {
    expect(preEnqueueLookaheadMs(1_000_000, 4, 40_000)).toBe(160_000);
    expect(preEnqueueLookaheadMs(1_000_000, 4, 4000)).toBeUndefined();
  });
});
