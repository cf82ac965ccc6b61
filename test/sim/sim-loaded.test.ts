import { describe, expect, it } from 'vitest';
import { CI_SEEDS, expectSafety, simulateCiSeeds } from './sim-seeds.ts';

/**
 * The loaded profile's seconds-long request tails are faults here as throttling is: a failover whose path met one (a
 * slow receive, claim, renewal or extension of the slice) is reported apart, and the bound holds for the rest
 * (docs/simulation.md, "Measured"). About a fifth of the loaded profile's failovers are reported apart so.
 */
describe(`simulation, loaded profile: seeds ${CI_SEEDS.from}-${CI_SEEDS.to}, ${CI_SEEDS.minutes} simulated minutes each`, () => {
  it('keeps every invariant, and fails over within 5 s when no fault or latency tail is on the path', async () => {
    const report = await simulateCiSeeds('loaded');
    expectSafety(report);
    expect(report.failover.maxMs, report.failingSeeds.map((seed) => seed.replay).join('\n')).toBeLessThan(5000);
    expect(report.failover.p99Ms).toBeLessThan(4000);
    // The tails are reported apart, not lost: every failover is in the report.
    expect(report.failoverApart.slowedByAws.count).toBeGreaterThan(0);
    expect(report.failoverAll.count).toBe(
      report.failover.count + Object.values(report.failoverApart).reduce((sum, apart) => sum + apart.count, 0),
    );
  }, 600_000);
});
