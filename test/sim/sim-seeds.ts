/**
 * The simulation's fixed seeds in `npm test`: 10 simulated hours, split
 * between the two profiles and run as two files (one per core).
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { runSimulation, type SimReport } from '../../tools/sim/run-sim.ts';
import type { ProfileName } from '../../tools/sim/sim-network.ts';

export const CI_SEEDS = { from: 1, to: 30, minutes: 10 } as const;

export async function simulateCiSeeds(profile: ProfileName): Promise<SimReport> {
  const out = await mkdtemp(path.join(os.tmpdir(), `cronfence-sim-${profile}-`));
  return runSimulation({ fromSeed: CI_SEEDS.from, toSeed: CI_SEEDS.to, minutes: CI_SEEDS.minutes, profiles: [profile], out });
}

/** The invariants no seed may break, with each failing seed's replay command and trace in the message. */
export function expectSafety(report: SimReport): void {
  const failing = report.failingSeeds.map((seed) => [seed.replay, ...seed.trace.slice(0, 40)].join('\n')).join('\n\n');
  expect(
    {
      duplicates: report.duplicates,
      missed: report.missed,
      displaced: report.displaced,
      zombieCommitsAccepted: report.zombieCommitsAccepted,
      fenceViolations: report.fenceViolations,
    },
    failing,
  ).toEqual({ duplicates: 0, missed: 0, displaced: 0, zombieCommitsAccepted: 0, fenceViolations: 0 });
  // Work was done: a simulation that scheduled nothing would pass every check above.
  expect(report.expectedOccurrences).toBeGreaterThan(CI_SEEDS.minutes * (CI_SEEDS.to - CI_SEEDS.from + 1) * 30);
  expect(report.failover.count).toBeGreaterThan(CI_SEEDS.to - CI_SEEDS.from);
}
