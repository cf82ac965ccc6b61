/**
 * Misfire and catch-up at claim time: occurrences a scan sent before an
 * outage (their messages queued) and claimed after it are judged by the
 * job's catch-up window and misfire policy, the rule a scan applies to what
 * it has not sent yet (core/advance-plan.ts `lateClaim`): older than the
 * window, MISSED; inside it but more than a minute late, SKIPPED (`misfire`)
 * under `none`, and under `latest` unless no later occurrence is due. Real
 * Scanner and Worker over the in-memory stores, ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import { jitterOffsetMs } from '../../lib/core/jitter.ts';
import type { MisfirePolicy } from '../../lib/core/job-spec.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };
const WINDOW_MS = 90_000;

describe('a slot claimed late', () => {
  it('after an outage longer than the window, with occurrences already queued: MISSED past the window, SKIPPED (misfire) inside it under none and latest, run under all', async () => {
    const clock = new ManualClock(T0 - 1000);
    const engine = createMemoryEngine(clock);
    const runs: string[] = [];
    const policies: MisfirePolicy[] = ['all', 'none', 'latest'];
    for (const misfire of policies) {
      await engine.register(
        { id: `late-${misfire}`, schedule: '*/10 * * * * *', policies: { ...FAST, catchUpWindowMs: WINDOW_MS, misfire } },
        async (ctx) => {
          runs.push(`${ctx.jobId} ${isoSecond(ctx.scheduledAt.getTime())}`);
        },
      );
    }
    clock.set(T0);
    await engine.scanner('scanner', { lookaheadMs: 70_000 }).scanShard(0);
    const queued = [...new Set(engine.workQueue.messages().map((message) => message.key.scheduledAt))].sort((a, b) => a - b);
    expect(queued[0]).toBe(T0);
    expect(queued.at(-1)).toBeGreaterThanOrEqual(T0 + 60_000);

    // No worker for 150 s; then one drains what was queued (no scan yet: the scanner's own catch-up is not under test).
    clock.set(T0 + 150_000);
    await engine.drain(engine.worker('after-outage'));

    const outcome = async (jobId: string, at: number): Promise<string> => {
      const slice = await engine.slices.get({ jobId, scheduledAt: at });
      return `${slice?.status}${slice?.skipReason ? ` ${slice.skipReason}` : ''}`;
    };
    // Claimed at T0 + 150 s: a start more than 90 s before that is past the window; one 60 to 90 s before is inside it.
    const pastWindow = queued.filter((at) => at < T0 + 150_000 - WINDOW_MS);
    const inWindow = queued.filter((at) => at >= T0 + 150_000 - WINDOW_MS);
    expect(pastWindow.length).toBeGreaterThan(0);
    expect(inWindow.length).toBeGreaterThan(0);
    for (const misfire of policies) {
      const jobId = `late-${misfire}`;
      for (const at of pastWindow) expect(await outcome(jobId, at), `${jobId} ${isoSecond(at)}`).toBe('MISSED catchUp');
      // Under latest, a later occurrence is due for each of them (the scan after the outage sends the latest one).
      for (const at of inWindow)
        expect(await outcome(jobId, at), `${jobId} ${isoSecond(at)}`).toBe(misfire === 'all' ? 'SUCCEEDED' : 'SKIPPED misfire');
    }
    expect(runs.sort()).toEqual(inWindow.map((at) => `late-all ${isoSecond(at)}`).sort());
    const events = engine.events.events.filter((event) => event.type === 'missed' || event.type === 'skipped');
    expect(events.filter((event) => event.type === 'missed')).toHaveLength(pastWindow.length * policies.length);
    expect(events.filter((event) => event.type === 'skipped' && event.reason === 'misfire')).toHaveLength(inWindow.length * 2);
  });

  it('is judged from its start (its second plus the jitter offset), not its second; a window of 0 still runs a slot claimed on time', async () => {
    const clock = new ManualClock(T0 - 1000);
    const engine = createMemoryEngine(clock);
    const runs: number[] = [];
    const job = await engine.register(
      { id: 'jittered', schedule: '0 * * * * *', jitter: '50s', policies: { ...FAST, catchUpWindowMs: 0 } },
      async (ctx) => {
        runs.push(ctx.scheduledAt.getTime());
      },
    );
    const offset = jitterOffsetMs(job.id, 50_000);
    expect(offset).toBeGreaterThan(5000);
    // Claimed a second after its start: it runs, though its nominal second is long past the window of 0.
    await engine.workQueue.send([{ jobId: job.id, scheduledAt: T0, delaySeconds: 0, generation: job.generation }]);
    clock.set(T0 + offset + 1000);
    await engine.drain(engine.worker('on-time'));
    expect(runs).toEqual([T0]);
    // Claimed ten seconds after its start: MISSED.
    await engine.workQueue.send([{ jobId: job.id, scheduledAt: T0 + 60_000, delaySeconds: 0, generation: job.generation }]);
    clock.set(T0 + 60_000 + offset + 10_000);
    await engine.drain(engine.worker('late'));
    expect(runs).toEqual([T0]);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 + 60_000 })).toMatchObject({ status: 'MISSED', skipReason: 'catchUp' });
  });

  it("a retry, a takeover or an operator's slot is not a late first start: a retry due long after its slot still runs", async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    let calls = 0;
    const job = await engine.register(
      {
        id: 'retried',
        schedule: '0 * * * * *',
        policies: { ...FAST, catchUpWindowMs: 0, misfire: 'none', backoffBaseMs: 120_000, backoffMaxMs: 120_000 },
      },
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('first attempt fails');
      },
    );
    await engine.workQueue.send([{ jobId: job.id, scheduledAt: T0, delaySeconds: 0, generation: job.generation }]);
    await engine.drain(engine.worker('first'));
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toMatchObject({ status: 'FAILED' });
    clock.set(T0 + 200_000);
    await engine.drain(engine.worker('retry'));
    expect(calls).toBe(2);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
  });
});
