/**
 * The chaos drill, short, with a fixed seed: the real scanners and workers as
 * processes under every fault kind (lifecycle changes, late duplicates,
 * throttled and hung requests, bad rows under running jobs included). It fails the build on any
 * duplicate, missed slice, accepted zombie commit, displaced healthy holder,
 * committed-then-dead or SUCCEEDED-without-writes slice, or failover of
 * 10 s or more (the 5 s goal printed: see MOTO_FAILOVER_BOUND_MS; failovers a
 * throttled or hung request slowed are reported apart, docs/chaos.md). Then the 1,200-merchant settlement, its workers killed and
 * paused mid-batch, beside a few jobs under every fault: every occurrence pays
 * each merchant once (rows and wires at the mock bank), no committed chunk
 * redone, the same invariants and bound. Then a drill against a deliberately
 * unfenced store must report what it broke.
 *
 * The settlement has a drill of its own: in one drill with the 80 jobs the CI drill then ran, on a
 * 2-core machine whose moto was slow (2026-12-01), DynamoDB's moto process
 * ran at one full core and the failover bound broke (same seed, alone:
 * 6,252 ms with the settlement, 3,931 ms without; in fresh-clone CI runs 16 s
 * and 17 s, with 1 and 3 holders displaced), where apart each held.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  expectFaultsInjectedAndInvariantsHeld,
  expectInvariantsHeld,
  expectSettlementHeld,
  printFailover,
  runCiDrill,
  violationsBesidesFailoverGoal,
} from '../support/ci-drill.ts';
import { runDrill } from '../../tools/chaos/drill.ts';
import { awsEndpoint } from '../support/aws-endpoint.ts';
import { verifyDrillInstallation } from '../support/verify-drill.ts';

/**
 * The failover bound these CI drills assert: twice the 5 s goal. It catches a takeover that falls back to the
 * lease's margin or the sweep (tens of seconds); the goal itself is printed here and checked by `npm run chaos`'s
 * 300 s drills, whose verdict still breaks on it. On a slow 2-core machine (2026-12-01) the same drills' single
 * failovers measured 3.2 to 6.3 s run to run, with every correctness invariant held: a timing target that flakes
 * in a test, which the brief asks to measure and print, not to assert. (The LocalStack lane bounds at 15 s.)
 */
const MOTO_FAILOVER_BOUND_MS = 10_000;

/** Jobs beside the settlement in its drill: enough for every fault kind to land, few enough to leave it the emulator. */
const SETTLEMENT_DRILL_JOBS = 10;

const UNFENCED_REPLICA = fileURLToPath(new URL('../support/unfenced-replica.ts', import.meta.url));

describe('chaos drill', () => {
  it(
    'holds every invariant under kills, pauses, scanner kills, duplicates, delays, drops, skew, lost commit replies, slow handlers, lifecycle changes, late duplicates, throttling and hung requests',
    { timeout: 480_000 },
    async () => {
      awsEndpoint();
      const report = await runCiDrill('cronfence-chaos-');
      printFailover('drill', report, MOTO_FAILOVER_BOUND_MS);
      expectFaultsInjectedAndInvariantsHeld(report);
      expect(report.failover.maxMs).toBeLessThan(MOTO_FAILOVER_BOUND_MS);
      const others = violationsBesidesFailoverGoal(report);
      expect(others, others.join('; ')).toEqual([]);
      // The product's own audit agrees: `cronfence verify` on the drill's installation finds nothing.
      const audit = await verifyDrillInstallation(report);
      expect(audit.violations, JSON.stringify(audit.violations)).toEqual([]);
      expect(audit.exitCode).toBe(0);
    },
  );

  it(
    'pays each of 1,200 merchants once per occurrence, its workers killed and paused mid-batch, beside a few jobs under every fault',
    { timeout: 480_000 },
    async () => {
      awsEndpoint();
      const report = await runCiDrill('cronfence-chaos-settlement-', { settlement: true, jobs: SETTLEMENT_DRILL_JOBS });
      printFailover('settlement drill', report, MOTO_FAILOVER_BOUND_MS);
      expectInvariantsHeld(report);
      expectSettlementHeld(report);
      expect(report.faults.kill + report.faults.pause).toBeGreaterThan(0);
      expect(report.failover.maxMs).toBeLessThan(MOTO_FAILOVER_BOUND_MS);
      expect(report.settlement?.failover.maxMs ?? 0).toBeLessThan(MOTO_FAILOVER_BOUND_MS);
      const others = violationsBesidesFailoverGoal(report);
      expect(others, others.join('; ')).toEqual([]);
      const audit = await verifyDrillInstallation(report);
      expect(audit.violations, JSON.stringify(audit.violations)).toEqual([]);
      expect(audit.exitCode).toBe(0);
    },
  );

  it('catches a broken engine: without fence conditions on renewals and commits, zombies commit', { timeout: 300_000 }, async () => {
    awsEndpoint();
    const report = await runDrill({
      scanners: 1,
      workers: 3,
      jobs: 40,
      durationSeconds: 45,
      seed: 11,
      faults: ['pause', 'slowHandler'],
      outDir: mkdtempSync(path.join(tmpdir(), 'cronfence-chaos-broken-')),
      replicaEntry: UNFENCED_REPLICA,
    });
    expect(report.faults.pause).toBeGreaterThan(0);
    expect(report.duplicates + report.zombieCommitsAccepted).toBeGreaterThan(0);
    expect(report.violations.length).toBeGreaterThan(0);
    // `cronfence verify` catches it too, from the tables and the business rows alone.
    const audit = await verifyDrillInstallation(report);
    expect(audit.exitCode).toBe(1);
    expect(audit.violationCounts.double_commit ?? 0).toBeGreaterThan(0);
  });
});
