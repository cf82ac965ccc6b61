import { describe, expect, it } from 'vitest';
import { simulateSeed } from '../../tools/sim/simulate-seed.ts';
import { historyText } from '../../tools/sim/run-sim.ts';

describe('simulation replay', () => {
  it('gives the same history, byte for byte, for the same seed, and another for another seed', async () => {
    const run = async (seed: number): Promise<string> => historyText(await simulateSeed({ seed, minutes: 2, profile: 'loaded' }));
    const first = await run(11);
    expect(first.length).toBeGreaterThan(10_000);
    expect(await run(11)).toBe(first);
    expect(await run(12)).not.toBe(first);
  }, 120_000);
});
