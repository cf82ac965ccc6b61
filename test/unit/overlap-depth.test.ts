/**
 * Overlap at any depth: a per-second job whose handler runs 30 s, so a live
 * run is many more occurrences back than any fixed read of the job's newest
 * slices reaches. The real Worker over the in-memory stores on a ManualClock,
 * stepped one second at a time: each second's occurrence is enqueued, every
 * visible message delivered to a fresh worker, and a handler returns once 30
 * s of the clock have passed since it started. Leases outlast the run (the
 * lease keeper's renewals are real-time timers that never fire here). Then
 * two claims racing for the job's lane (core/overlap-policy.ts).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { OverlapPolicy } from '../../lib/core/job-spec.ts';
import type { Slice } from '../../lib/core/slice.ts';
import type { Disposition } from '../../lib/engine/worker.ts';
import { createMemoryEngine, gate } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const RUN_MS = 30_000;
const POLICIES = { leaseMs: 120_000, heartbeatMs: 60_000, timeoutMs: 40_000, maxAttempts: 3 };

interface Run {
  readonly slot: number;
  readonly start: number;
  end?: number;
}

interface Outcome {
  readonly runs: Run[];
  readonly slices: Slice[];
  /** Deliveries made: what a claim of a waiting occurrence costs, summed. */
  readonly deliveries: number;
}

/** Occurrences 0..count-1 of a per-second job under `policy`, stepped until every slice is final or `limitSeconds` passed. */
async function drive(policy: OverlapPolicy, count: number, limitSeconds: number): Promise<Outcome> {
  const clock = new ManualClock(T0);
  const engine = createMemoryEngine(clock);
  const runs: Run[] = [];
  const releases = new Map<number, () => void>();
  const started = new Map<number, () => void>();
  const id = `depth-${policy}`;
  const job = await engine.register({ id, schedule: '* * * * * *', policies: { ...POLICIES, overlap: policy } }, async (ctx) => {
    const slot = (ctx.scheduledAt.getTime() - T0) / 1000;
    const run: Run = { slot, start: clock.now() };
    runs.push(run);
    const done = new Promise<void>((resolve) => releases.set(slot, resolve));
    started.get(slot)?.();
    await done;
    run.end = clock.now();
  });
  const running = new Map<number, Promise<Disposition>>();
  let deliveries = 0;
  for (let second = 0; second <= limitSeconds; second++) {
    clock.set(T0 + second * 1000);
    for (const run of runs.filter((candidate) => candidate.end === undefined && candidate.start + RUN_MS <= clock.now())) {
      releases.get(run.slot)?.();
      expect(await running.get(run.slot)).toBe('delete');
      running.delete(run.slot);
    }
    if (second < count) await engine.enqueue(job, T0 + second * 1000);
    for (let batch = engine.workQueue.receive(); batch.length > 0; batch = engine.workQueue.receive()) {
      for (const message of batch) {
        const slot = ((JSON.parse(message.body) as { scheduledAt: number }).scheduledAt - T0) / 1000;
        // A running slice's holder keeps its message hidden (heartbeats): its surfacing here is not a delivery.
        if (running.has(slot)) continue;
        deliveries++;
        const began = new Promise<'started'>((resolve) => started.set(slot, () => resolve('started')));
        const delivery = engine.deliver(engine.worker(`w${deliveries}`), message);
        if ((await Promise.race([delivery, began])) === 'started') running.set(slot, delivery);
      }
    }
    const slices = await engine.jobs().slicesOf(id, 0);
    if (second >= count && running.size === 0 && slices.every((slice) => slice.status === 'SUCCEEDED' || slice.status === 'SKIPPED')) {
      return { runs, slices, deliveries };
    }
  }
  throw new Error(`not every slice final after ${limitSeconds} s: runs ${runs.map((run) => run.slot).join(',')}`);
}

/** Pairs of runs whose [start, end) intervals intersect. */
function concurrent(runs: readonly Run[]): string[] {
  const pairs: string[] = [];
  runs.forEach((a, i) =>
    runs
      .slice(i + 1)
      .forEach((b) => (a.start < (b.end ?? Infinity) && b.start < (a.end ?? Infinity) ? pairs.push(`${a.slot}|${b.slot}`) : 0)),
  );
  return pairs;
}

const ascending = (values: readonly number[]): boolean => values.every((value, i) => i === 0 || values[i - 1]! < value);

describe('overlap at any depth: a per-second job with a 30 s run (manual clock)', () => {
  it('skip: no run starts beside the live one, however many occurrences ago it started; one run per 30 s', async () => {
    const { runs, slices } = await drive('skip', 70, 200);
    expect(concurrent(runs)).toEqual([]);
    expect(runs.map((run) => run.slot)).toEqual([0, 30, 60]);
    expect(slices).toHaveLength(70);
    expect(slices.filter((slice) => slice.status === 'SKIPPED').every((slice) => slice.skipReason === 'overlap')).toBe(true);
  });

  it('bufferOne: the buffered occurrence runs next (never overtaken by newer ones), one at a time, in slot order', async () => {
    const { runs, slices } = await drive('bufferOne', 70, 300);
    expect(concurrent(runs)).toEqual([]);
    const slots = runs.map((run) => run.slot);
    // 0 runs; 1 is buffered behind it and runs next; the ones due meanwhile are dropped.
    expect(slots.slice(0, 2)).toEqual([0, 1]);
    expect(ascending(slots)).toBe(true);
    expect(slots.length).toBeGreaterThanOrEqual(4);
    const succeeded = slices.filter((slice) => slice.status === 'SUCCEEDED').map((slice) => (slice.scheduledAt - T0) / 1000);
    expect(succeeded).toEqual(slots);
    expect(slices.filter((slice) => slice.status === 'SKIPPED').every((slice) => slice.skipReason === 'overlap')).toBe(true);
  });

  it('bufferAll: every occurrence runs, one at a time, in slot order, past the 25th', async () => {
    const count = 30;
    const { runs, slices } = await drive('bufferAll', count, 2400);
    expect(concurrent(runs)).toEqual([]);
    expect(runs.map((run) => run.slot)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(slices.every((slice) => slice.status === 'SUCCEEDED')).toBe(true);
  });
});

describe('the lane taken by two claims at once', () => {
  it('both read it free; one take lands and runs, the other reads again, finds that run live and is SKIPPED', async () => {
    const clock = new ManualClock(T0 + 1000);
    const engine = createMemoryEngine(clock);
    const release = gate();
    const runs: number[] = [];
    const job = await engine.register({ id: 'race', schedule: '* * * * * *', policies: { ...POLICIES, overlap: 'skip' } }, async (ctx) => {
      runs.push(ctx.scheduledAt.getTime());
      await release.opened;
    });
    await engine.enqueue(job, T0);
    await engine.enqueue(job, T0 + 1000);
    // Each gate's first read of the lane waits until both have read it: both see it free.
    let reads = 0;
    const bothRead = gate();
    const racing = Object.assign(Object.create(engine.overlap) as typeof engine.overlap, {
      lane: async (jobId: string) => {
        const lane = await engine.overlap.lane(jobId);
        if (++reads === 2) bothRead.open();
        if (reads <= 2) await bothRead.opened;
        return lane;
      },
    });
    const [first, second] = engine.workQueue.receive();
    const deliveries = [first!, second!].map((message, i) => engine.deliver(engine.worker(`racer-${i}`, { overlap: racing }), message));
    await engine.nextEvent((event) => event.type === 'skipped');
    await engine.nextEvent((event) => event.type === 'started');
    expect(runs).toHaveLength(1);
    const skipped = (await engine.jobs().slicesOf('race', 0)).filter((slice) => slice.status === 'SKIPPED');
    expect(skipped.map((slice) => [slice.scheduledAt === runs[0], slice.skipReason])).toEqual([[false, 'overlap']]);
    release.open();
    expect(await Promise.all(deliveries)).toEqual(['delete', 'delete']);
    expect((await engine.overlap.lane('race'))?.runAt).toBe(runs[0]);
  });
});
