/**
 * A scanner's message carries the definition of the generation it was sent
 * for, and the claim creates the slice with it. The worker then reads the job:
 * a first run of a generation the job has moved on from is SKIPPED with the
 * change's reason, never run; the current generation's own message re-creates
 * the instant and runs it; a takeover goes on under the definition it started
 * with. Real Worker over the in-memory stores, ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import { definitionOf, type StoredJob } from '../../lib/core/ports.ts';
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
  await engine.workQueue.send([{ jobId: job.id, scheduledAt: at, delaySeconds: 0, run: definitionOf(job) }]);
}

describe('a message of a generation the job has moved on from', () => {
  it('is skipped with the change\'s reason, recorded no earlier than the change even by a worker whose clock runs behind; the new generation\'s message runs the instant', async () => {
    const { engine, clock, first, payloads } = await setUp();
    await sendAs(engine, first, T0);
    clock.set(T0 - 1000);
    const second = (await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 2 } })).job;
    expect(second.generation).toBe(first.generation + 1);

    clock.set(T0);
    // Half a second behind the clock that made the change (within the early-message tolerance: it claims).
    const behind = engine.worker('behind', { clock: new OffsetClock(-1500, clock) });
    expect(await engine.drain(behind)).toBe(1);
    expect(payloads).toEqual([]);
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toMatchObject({
      status: SliceStatus.Skipped,
      skipReason: 'superseded',
      generation: first.generation,
      finishedAt: second.updatedAt,
    });
    expect(engine.events.events.map((event) => `${event.type}:${event.reason ?? ''}`)).toEqual(['skipped:superseded']);

    await sendAs(engine, second, T0);
    expect(await engine.drain(engine.worker('current'))).toBe(1);
    expect(payloads).toEqual([{ rev: 2 }]);
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toMatchObject({ status: SliceStatus.Succeeded, generation: second.generation, fence: 2, attempts: 1 });
    // The older message, sent again, finds a newer generation's slice and is dropped.
    await sendAs(engine, first, T0);
    expect(await engine.drain(engine.worker('late'))).toBe(1);
    expect(payloads).toEqual([{ rev: 2 }]);
  });

  it('after a pause or a delete, is skipped as paused or deleted', async () => {
    for (const change of ['pause', 'delete'] as const) {
      const { engine, clock, first, payloads } = await setUp();
      await sendAs(engine, first, T0);
      if (change === 'pause') await engine.jobs().pause(first.id);
      else await engine.jobs().delete(first.id);
      clock.set(T0);
      await engine.drain(engine.worker('w'));
      expect(payloads, change).toEqual([]);
      expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 }), change).toMatchObject({ status: SliceStatus.Skipped, skipReason: change === 'pause' ? 'paused' : 'deleted' });
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

  it('when the newer generation\'s own message is lost and that generation ends too, its change records the instant for it (an older generation\'s skip is no record of it)', async () => {
    const { engine, clock, first, payloads } = await setUp();
    await sendAs(engine, first, T0);
    clock.set(T0 - 3000);
    const second = (await engine.jobs().put({ id: 'moves-on', schedule: '*/5 * * * * *', handler: 'moves-on', policies: FAST, payload: { rev: 2 } })).job;
    clock.set(T0);
    await engine.drain(engine.worker('w'));
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toMatchObject({ status: SliceStatus.Skipped, generation: first.generation });
    // The second generation's message for T0 never comes (lost); it ends 2 s later.
    clock.set(T0 + 2000);
    const third = await engine.jobs().put({ id: 'moves-on', schedule: '*/7 * * * * *', handler: 'moves-on', policies: FAST });
    expect(third.skipped).toBe(1);
    expect(await engine.slices.get({ jobId: first.id, scheduledAt: T0 })).toMatchObject({
      status: SliceStatus.Skipped,
      skipReason: 'superseded',
      generation: second.generation,
      finishedAt: T0 + 2000,
    });
    expect(payloads).toEqual([]);
  });
});
