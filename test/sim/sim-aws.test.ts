import { describe, expect, it } from 'vitest';
import { CI_SEEDS, expectSafety, simulateCiSeeds } from './sim-seeds.ts';

describe(`simulation, aws profile: seeds ${CI_SEEDS.from}-${CI_SEEDS.to}, ${CI_SEEDS.minutes} simulated minutes each`, () => {
  it('keeps every invariant, and fails over within 5 s', async () => {
    const report = await simulateCiSeeds('aws');
    expectSafety(report);
    expect(report.failover.maxMs, report.failingSeeds.map((seed) => seed.replay).join('\n')).toBeLessThan(5000);
    expect(report.failover.p99Ms).toBeLessThan(4000);
  }, 600_000);
});
