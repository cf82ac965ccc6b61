/**
 * The simulation's fixed seeds in `npm test`: 10 simulated hours, split
 * between the two profiles and run as two files (one per core), with
 * poisoned rows and forged messages; and a few seeds across each DST
 * transition (sim-dst.test.ts).
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { runSimulation, type SimReport } from '../../tools/sim/run-sim.ts';
import type { DstMode } from '../../tools/chaos/dst.ts';
import type { ProfileName } from '../../tools/sim/sim-network.ts';

export const CI_SEEDS = { from: 1, to: 30, minutes: 10 } as const;

export async function simulateCiSeeds(
  profile: ProfileName,
  seeds: { readonly from: number; readonly to: number } = CI_SEEDS,
  dst?: DstMode,
): Promise<SimReport> {
  const out = await mkdtemp(path.join(os.tmpdir(), `cronfence-sim-${profile}-`));
  return runSimulation({
    fromSeed: seeds.from,
    toSeed: seeds.to,
    minutes: CI_SEEDS.minutes,
    profiles: [profile],
    out,
    ...(dst && { dst }),
  });
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
      inputViolations: report.inputViolations,
      settlementViolations: report.settlementViolations,
    },
    failing,
  ).toEqual({
    duplicates: 0,
    missed: 0,
    displaced: 0,
    zombieCommitsAccepted: 0,
    fenceViolations: 0,
    inputViolations: 0,
    settlementViolations: 0,
  });
  // Work was done: a simulation that scheduled nothing, poisoned nothing and forged nothing would pass every check above.
  const seeds = report.seeds.count;
  expect(report.expectedOccurrences).toBeGreaterThan(CI_SEEDS.minutes * seeds * 30);
  expect(report.failover.count).toBeGreaterThan(seeds - 1);
  expect(report.poisonings).toBeGreaterThanOrEqual(2 * seeds);
  expect(report.forgedMessages).toBeGreaterThanOrEqual(CI_SEEDS.minutes * seeds);
  expect(report.settlements).toBeGreaterThanOrEqual((CI_SEEDS.minutes - 1) * seeds);
  expect(report.settlementTakeovers).toBeGreaterThanOrEqual(seeds);
}
