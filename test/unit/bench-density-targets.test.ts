/**
 * The density targets judge a scan that did its work: a level whose scan sent
 * fewer than its due schedules measured a failed or stopped scan, whose zero
 * items per due slice must not pass for flat (the 1,000,000-schedule level of
 * 2026-12-05 sent 0 of 200 and was printed "1.2 → 0 met").
 */
import { describe, expect, it } from 'vitest';
import type { DensityLevel } from '../../tools/bench/density.ts';
import { densityTargets } from '../../tools/bench/report.ts';

function level(schedules: number, sent: number, itemsTouchedPerDueSlice: number, scannerPeakRssMb: number): DensityLevel {
  return {
    schedules,
    due: 200,
    sent,
    itemsRead: 0,
    itemsWritten: 0,
    itemsTouchedPerDueSlice,
    dynamoRequests: 0,
    dynamoRequestsPerDueSlice: 0,
    writeRequestUnits: 0,
    readRequestUnits: 0,
    msPerShardMean: 0,
    msPerShardMax: 0,
    scannerRssBeforeMb: 115,
    scannerPeakRssMb,
    scannerPeakHeapMb: 30,
    registerSeconds: 1,
    scanErrors: sent < 200 ? ['scanning shard 0: TimeoutError: a request has exceeded the configured 3000 ms requestTimeout'] : [],
  };
}

describe('density targets', () => {
  it('are met when every level sent its due schedules and the figures stay flat', () => {
    const checks = densityTargets([level(10_000, 200, 1.2, 149), level(100_000, 200, 1.2, 145.6)]);
    expect(checks.map((check) => check.met)).toEqual([true, true]);
  });

  it('are not met when a level’s scan sent fewer than its due schedules, and say which', () => {
    const checks = densityTargets([level(10_000, 200, 1.2, 149), level(100_000, 200, 1.2, 145.6), level(1_000_000, 0, 0, 118.7)]);
    expect(checks.map((check) => check.met)).toEqual([false, false]);
    expect(checks[1]?.measured).toBe(
      '1.2 → 0 (the scan at 1,000,000 sent 0 of 200 due; scanning shard 0: TimeoutError: a request has exceeded the configured 3000 ms requestTimeout)',
    );
  });

  it('are not met when items touched per due slice grow', () => {
    expect(densityTargets([level(10_000, 200, 1.2, 149), level(100_000, 200, 3, 150)])[1]?.met).toBe(false);
  });
});
