/**
 * Two scanners racing one shard create each slice once and send each once;
 * the sweep re-sends a slice whose message was lost; a redelivered scan
 * re-sends what a crashed scanner may not have sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import type { WorkQueue } from '../../lib/core/ports.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

const START = Math.floor(Date.now() / 1000) * 1000;
const clock = new ManualClock(START);
let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation({ clock, env: { CRONFENCE_LOOKAHEAD_MS: '30000' } });
});
afterAll(() => installation?.destroy());

const JOBS = Array.from({ length: 12 }, (_, i) => ({
  id: `race-${i}`,
  schedule: i % 2 === 0 ? '*/5 * * * * *' : `${i} * * * * *`,
  handler: 'h',
}));

describe('scanners racing one shard', () => {
  it('create every due slice exactly once and send it exactly once, over three rounds', async () => {
    const { runtime } = installation;
    const repository = runtime.jobs();
    for (const job of JOBS) await repository.put(job);
    const a = runtime.scanner('scanner-a');
    const b = runtime.scanner('scanner-b');
    let conflicts = 0;
    let created = 0;
    for (let round = 0; round < 3; round++) {
      const [ra, rb] = await Promise.all([a.scanShard(0), b.scanShard(0)]);
      conflicts += ra.conflicts + rb.conflicts;
      created += ra.slicesCreated + rb.slicesCreated;
      // Less than the sweep grace (30 s): no slice is overdue yet, so every message sent is a first send.
      clock.advance(5000);
    }
    // Expected: every occurrence from registration to the last window's end (START + 10 s + 30 s lookahead).
    const windowEnd = START + 10_000 + 30_000;
    let expected = 0;
    for (const job of JOBS) {
      const occurrences = occurrencesBetween({ cron: job.schedule, timeZone: 'UTC' }, START, windowEnd, 1000);
      const slices = await repository.slicesOf(job.id, 0);
      expect(slices.map((slice) => slice.scheduledAt)).toEqual(occurrences);
      expect(slices.every((slice) => slice.status === 'ENQUEUED' && slice.fence === 0)).toBe(true);
      expected += occurrences.length;
    }
    expect(created).toBe(expected);
    expect(conflicts).toBeGreaterThan(0);
    expect(await installation.depth(installation.resources.queueUrls.work)).toBe(expected);
  });

  it('the sweep re-sends an enqueued slice whose message was lost, once its sweep time has passed', async () => {
    const { runtime } = installation;
    const before = await installation.depth(installation.resources.queueUrls.work);
    // Nothing is overdue yet: no re-sends.
    const quiet = await runtime.scanner('scanner-c').scanShard(0);
    expect(quiet.swept).toBe(0);
    // Jump past every slice's due time + grace: as if every message had been lost.
    clock.advance(200_000);
    const sweep = await runtime.scanner('scanner-c').scanShard(0);
    expect(sweep.swept).toBeGreaterThan(0);
    const after = await installation.depth(installation.resources.queueUrls.work);
    expect(after - before).toBe(quiet.slicesCreated + sweep.swept + sweep.slicesCreated);
    // The sweep pushed their next look out: an immediate second scan re-sends none of them.
    const again = await runtime.scanner('scanner-c').scanShard(0);
    expect(again.swept).toBe(0);
  });

  it('a redelivered scan re-sends exactly the enqueued slices its first delivery created', async () => {
    const { runtime } = installation;
    clock.advance(10_000);
    // The first delivery of scan "scan-1" creates slices, then (as if killed) never sends them: its sends are lost.
    const lost: WorkQueue = { send: async () => {}, hide: async () => {}, hideBatched: async () => {} };
    const crashed = new Scanner({ ...scannerDeps(runtime), queue: lost });
    const first = await crashed.scanShard(0, { scanId: 'scan-1' });
    expect(first.slicesCreated).toBeGreaterThan(0);
    // An unrelated redelivered scan re-sends nothing of scan-1's.
    const other = await runtime.scanner('scanner-d').scanShard(0, { scanId: 'scan-2', redelivered: true });
    expect(other.resent).toBe(0);
    // The redelivery of scan-1 re-sends every slice scan-1 created, and no others.
    const before = await installation.depth(installation.resources.queueUrls.work);
    const report = await runtime.scanner('scanner-d').scanShard(0, { scanId: 'scan-1', redelivered: true });
    expect(report.resent).toBe(first.slicesCreated);
    expect((await installation.depth(installation.resources.queueUrls.work)) - before).toBe(report.resent + report.slicesCreated + report.swept);
    const messages = await installation.receive(installation.resources.queueUrls.work, 10, 1);
    for (const message of messages) expect(() => decodeWorkMessage(message.Body ?? '')).not.toThrow();
  });
});

function scannerDeps(runtime: Runtime) {
  return {
    scannerId: 'crashed',
    schedules: runtime.schedules,
    slices: runtime.slices,
    queue: runtime.workQueue,
    events: runtime.events,
    clock: runtime.clock,
    lookaheadMs: runtime.config.lookaheadMs,
    sweepGraceMs: runtime.config.sweepGraceMs,
  };
}
