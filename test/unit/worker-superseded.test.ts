/**
 * A scanner's message names the generation it was sent for; the worker reads
 * the job and creates the slice only for the job's current generation, from
 * its stored definition. A message of a generation the job has moved on from
 * creates nothing (the change recorded what that generation had due); a slice
 * on record of such a generation is SKIPPED with the change's reason, never
 * run; the current generation's own message runs the instant; a takeover goes
 * on under the definition it started with. Real Worker over the in-memory
 * stores, ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };

async function setUp(): Promise<{ engine: MemoryEngine; clock: ManualClock; first: StoredJob; payloads: unknown[] }> {
  const clock = new ManualClock(T0 - 60_000);
  const engine = createMemoryEngine(clock);
  const payloads: unknown[] = [];
  const first = await engine.register({ id: 'moves-on', schedule: '*/5 * * * * *', policies: FAST, payload: { rev: 1 } }, async (ctx) => {
    payloads.push(ctx.payload);
  });
  return { engine, clock, first, payloads };
}

/** The scanner's message for `at`, as it went out while `job` was current. */
async function sendAs(engine: MemoryEngine, job: StoredJob, at: number): Promise<void> {
  await engine.workQueue.send([{ jobId: job.id, scheduledAt: at, delaySeconds: 0, generation: job.generation }]);
}

describe('a message of a generation the job has moved on from', () => {
  it("creates nothing, so the new generation's message runs the instant; an older generation's slice on record is skipped with the change's reason, recorded no earlier than the change even by a worker whose clock runs behind", async () => {
    const { engine, clock, first, payloads } = await setUp();
    await sendAs(engine, first, T0);
    clock.set(T0 - 1000);
    const second = (
      await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 2 } })
    ).job;
    expect(second.generation).toBe(first.generation + 1);

    clock.set(T0);
    expect(await engine.drain(engine.worker('stale'))).toBe(1);
    expect(payloads).toEqual([]);
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toBeUndefined();
    expect(engine.events.events).toEqual([]);

    await sendAs(engine, second, T0);
    expect(await engine.drain(engine.worker('current'))).toBe(1);
    expect(payloads).toEqual([{ rev: 2 }]);
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toMatchObject({
      status: SliceStatus.Succeeded,
      generation: second.generation,
      fence: 1,
      attempts: 1,
    });
    // The older message, sent again, finds the slice final and is dropped.
    await sendAs(engine, first, T0);
    expect(await engine.drain(engine.worker('late'))).toBe(1);
    expect(payloads).toEqual([{ rev: 2 }]);

    // A slice of the first generation on record that no change settled (made after the last one, say, by a
    // reconciler that read the job before it), claimed by its sweep's message (no generation) by a worker whose
    // clock runs 1.5 s behind the one that made that change.
    clock.set(T0 + 4000);
    const third = (
      await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 3 } })
    ).job;
    const onRecord = { jobId: first.id, scheduledAt: T0 + 5000 };
    await engine.slices.enqueue(definitionOf(first), [{ ...onRecord, sweepAt: T0 + 35_000 }], T0 + 4000);
    await engine.workQueue.send([{ ...onRecord, delaySeconds: 0 }]);
    clock.set(T0 + 5000);
    expect(await engine.drain(engine.worker('behind', { clock: new OffsetClock(-1500, clock) }))).toBe(1);
    expect(payloads).toEqual([{ rev: 2 }]);
    expect(await engine.slices.get(onRecord)).toMatchObject({
      status: SliceStatus.Skipped,
      skipReason: 'superseded',
      generation: first.generation,
      finishedAt: third.updatedAt,
    });
  });

  it('after a pause or a delete, creates nothing and runs nothing', async () => {
    for (const change of ['pause', 'delete'] as const) {
      const { engine, clock, first, payloads } = await setUp();
      await sendAs(engine, first, T0);
      if (change === 'pause') await engine.jobs().pause(first.id);
      else await engine.jobs().delete(first.id);
      clock.set(T0);
      expect(await engine.drain(engine.worker('w')), change).toBe(1);
      expect(payloads, change).toEqual([]);
      expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 }), change).toBeUndefined();
      expect(engine.deadLetters.records, change).toEqual([]);
    }
  });

  it('a takeover of a run that started before the change goes on under its own definition', async () => {
    const { engine, clock, first, payloads } = await setUp();
    clock.set(T0);
    const key = { jobId: first.id, scheduledAt: T0 };
    // A holder claimed it (and died) before the change.
    expect((await engine.slices.claim(key, 'dead-holder', T0, 'm-dead', 1, definitionOf(first))).won).toBe(true);
    await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 2 } });
    clock.set(T0 + 10_000);
    await sendAs(engine, first, T0);
    await engine.drain(engine.worker('standby'));
    expect(payloads).toEqual([{ rev: 1 }]);
    expect(await engine.slices.get(key)).toMatchObject({ status: SliceStatus.Succeeded, generation: first.generation, fence: 2 });
  });

  it("when the newer generation's own message is lost and that generation ends too, its change records the instant for it (an older generation's skip is no record of it)", async () => {
    const { engine, clock, first, payloads } = await setUp();
    clock.set(T0 - 3000);
    const second = (
      await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 2 } })
    ).job;
    // The first generation's slice at T0, claimed just before the change and then skipped as superseded.
    const key = { jobId: first.id, scheduledAt: T0 };
    const claimed = await engine.slices.claim(key, 'w', T0 - 3000, 'm', 1, definitionOf(first));
    expect(claimed.won).toBe(true);
    await engine.slices.skipClaimed({ key, fence: 1 }, 'superseded', T0 - 3000);
    // The second generation's message for T0 never comes (lost); it ends 2 s later.
    clock.set(T0 + 2000);
    const third = await engine.jobs().put({ id: 'moves-on', schedule: '*/7 * * * * *', handler: 'moves-on', policies: FAST });
    expect(third.skipped).toBe(1);
    expect(await engine.slices.get(key)).toMatchObject({
      status: SliceStatus.Skipped,
      skipReason: 'superseded',
      generation: second.generation,
      finishedAt: T0 + 2000,
    });
    expect(payloads).toEqual([]);
  });
});
