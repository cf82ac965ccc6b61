/**
 * A work message names a slot; it never decides what runs. Whoever can send
 * to the work queue (or a bug that sends a stale body) gets at most a claim of
 * a slot the job has: the worker runs the handler, payload and policies the
 * job has stored for the message's generation, refuses (dead-letters with the
 * reason) a second that is not an occurrence and has no slot on record, and
 * creates nothing there that could block the real occurrence. Bodies in the
 * format sent before this rule (`run`: a whole definition) are decoded, and
 * their `run` is not trusted. Real Worker over the in-memory stores,
 * ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };

interface Setup {
  readonly engine: MemoryEngine;
  readonly clock: ManualClock;
  readonly job: StoredJob;
  readonly runs: string[];
}

/** `pay` runs every minute at :00 with its stored payload; `drain` is another handler the same workers have. */
async function setUp(): Promise<Setup> {
  const clock = new ManualClock(T0 - 60_000);
  const engine = createMemoryEngine(clock);
  const runs: string[] = [];
  const job = await engine.register({ id: 'pay', schedule: '0 * * * * *', policies: FAST, payload: { amount: 100 } }, async (ctx) => {
    runs.push(`pay ${JSON.stringify(ctx.payload)} @${ctx.scheduledAt.toISOString()}`);
  });
  await engine.register({ id: 'drain', schedule: '0 0 1 1 *', enabled: false, policies: FAST }, async (ctx) => {
    runs.push(`drain ${JSON.stringify(ctx.payload)} @${ctx.scheduledAt.toISOString()}`);
  });
  return { engine, clock, job, runs };
}

/** A body as a forger (or a worker before this change) wrote it: the job's current generation and a definition of its own. */
function forgedBody(job: StoredJob, scheduledAt: number, handler: string, payload: Record<string, unknown>): string {
  return JSON.stringify({ v: 1, jobId: job.id, scheduledAt, run: { ...definitionOf(job), handler, payload } });
}

async function deliverRaw(engine: MemoryEngine, body: string, id: string): Promise<string> {
  return engine.deliver(engine.worker(`w-${id}`), { body, receiptHandle: `receipt-${id}`, messageId: id, receiveCount: 1 });
}

describe('a forged work message', () => {
  it('at a real occurrence, with another handler and payload: the stored handler runs with the stored payload, once', async () => {
    const { engine, clock, job, runs } = await setUp();
    clock.set(T0);
    expect(await deliverRaw(engine, forgedBody(job, T0, 'drain', { amount: 1_000_000 }), 'forged')).toBe('delete');
    // The scanner's own message for the occurrence comes next: the slot is final, it is dropped.
    await engine.workQueue.send([{ jobId: job.id, scheduledAt: T0, delaySeconds: 0, generation: job.generation }]);
    expect(await engine.drain(engine.worker('real'))).toBe(1);
    expect(runs).toEqual(['pay {"amount":100} @2026-06-01T12:00:00.000Z']);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toMatchObject({
      status: SliceStatus.Succeeded,
      handler: 'pay',
      payload: { amount: 100 },
      fence: 1,
    });
  });

  it('at a second that is not an occurrence: refused and dead-lettered with the reason, no slice created, nothing run', async () => {
    const { engine, clock, job, runs } = await setUp();
    const notAnOccurrence = T0 + 7000;
    clock.set(notAnOccurrence);
    const legacy = forgedBody(job, notAnOccurrence, 'drain', { amount: 1_000_000 });
    const current = JSON.stringify({ v: 1, jobId: job.id, scheduledAt: notAnOccurrence, generation: job.generation });
    expect(await deliverRaw(engine, legacy, 'legacy')).toBe('delete');
    expect(await deliverRaw(engine, current, 'current')).toBe('delete');
    expect(runs).toEqual([]);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: notAnOccurrence })).toBeUndefined();
    expect(engine.deadLetters.rejected.map((rejected) => [rejected.kind, rejected.reason])).toEqual([
      [
        'unrunnable-message',
        expect.stringMatching(
          /^2026-06-01T12:00:07Z \(\d+\) is not an occurrence of generation 1 \(schedule "0 \* \* \* \* \*" in UTC\), and no slot is on record there$/,
        ),
      ],
      ['unrunnable-message', expect.stringMatching(/is not an occurrence of generation 1/)],
    ]);
    expect(engine.events.events).toEqual([]);
  });

  it('for a generation the job never had, or for a job that does not exist: refused, nothing created', async () => {
    const { engine, clock, job, runs } = await setUp();
    clock.set(T0);
    const future = JSON.stringify({ v: 1, jobId: job.id, scheduledAt: T0, generation: job.generation + 1 });
    const nosuch = JSON.stringify({ v: 1, jobId: 'nosuch', scheduledAt: T0, run: { ...definitionOf(job), handler: 'drain' } });
    expect(await deliverRaw(engine, future, 'future')).toBe('delete');
    expect(await deliverRaw(engine, nosuch, 'nosuch')).toBe('delete');
    expect(runs).toEqual([]);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toBeUndefined();
    expect(await engine.slices.get({ jobId: 'nosuch', scheduledAt: T0 })).toBeUndefined();
    expect(engine.deadLetters.rejected.map((rejected) => rejected.reason)).toEqual([
      'generation 2 is newer than job "pay"\'s (1)',
      'no job "nosuch" is stored',
    ]);
  });

  it("for a paused job's current generation: refused, nothing run", async () => {
    const { engine, clock, job, runs } = await setUp();
    const paused = (await engine.jobs().pause(job.id)).job;
    clock.set(T0);
    const body = JSON.stringify({ v: 1, jobId: job.id, scheduledAt: T0, generation: paused.generation });
    expect(await deliverRaw(engine, body, 'paused')).toBe('delete');
    expect(runs).toEqual([]);
    expect(engine.deadLetters.rejected.map((rejected) => rejected.reason)).toEqual([
      expect.stringMatching(/job "pay" is paused in generation 2$/),
    ]);
  });

  it("at a slot on record that is no occurrence (a trigger's sub-second instant): runs the slot's own definition, whatever the message says", async () => {
    const { engine, clock, job, runs } = await setUp();
    // What `cronfence jobs trigger --payload` writes (lib/aws/operator-slots.ts): the stored definition, its payload replaced.
    const slot = { jobId: job.id, scheduledAt: T0 + 7_250 };
    await engine.slices.enqueue({ ...definitionOf(job), payload: { amount: 7 } }, [{ ...slot, sweepAt: slot.scheduledAt + 30_000 }], T0);
    clock.set(slot.scheduledAt + 1000);
    expect(await deliverRaw(engine, forgedBody(job, slot.scheduledAt, 'drain', { amount: 1_000_000 }), 'at-slot')).toBe('delete');
    expect(runs).toEqual(['pay {"amount":7} @2026-06-01T12:00:07.250Z']);
    expect(engine.deadLetters.rejected).toEqual([]);
  });
});
