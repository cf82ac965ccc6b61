import { describe, expect, it } from 'vitest';
import { DST_MODES } from '../../tools/chaos/dst.ts';
import { CI_SEEDS, expectSafety, simulateCiSeeds } from './sim-seeds.ts';

/**
 * Windows across each DST transition of America/New_York, where one job in four runs in the local hours the
 * transition removes or repeats; expected occurrences follow lib/core/schedule.ts's DST policy (the drill's `--dst`).
 */
describe.each(DST_MODES)(
  `simulation across the %s DST transition, aws profile: 4 seeds of ${CI_SEEDS.minutes} simulated minutes`,
  (mode) => {
    it('keeps every invariant, and fails over within 5 s', async () => {
      const report = await simulateCiSeeds('aws', { from: 1, to: 4 }, mode);
      expectSafety(report);
      expect(report.dst).toBe(mode);
      expect(report.failover.maxMs, report.failingSeeds.map((seed) => seed.replay).join('\n')).toBeLessThan(5000);
    }, 300_000);
  },
);
