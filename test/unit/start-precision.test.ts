/**
 * Start precision (core/start-precision.ts): the delay a message is sent
 * with, so an `exact` job's surfaces in the second before its start and a
 * `within-second` job's at or after it, never before; the real Scanner and
 * Worker over the in-memory stores with a manual clock (the exact job's
 * worker waits for the second, the within-second one's starts at once, and
 * waits only for a clock behind the scanner's); the policy's validation and
 * its stored form.
 */
import { describe, expect, it } from 'vitest';
import { jobItem, toStoredJob } from '../../lib/aws/dynamo/items.ts';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { startAtOf } from '../../lib/core/jitter.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import { surfaceDelaySeconds } from '../../lib/core/start-precision.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const noop = async (): Promise<void> => {};

describe('surfaceDelaySeconds', () => {
  it('exact rounds down, within-second up; a start on a whole second from now is that many seconds either way', () => {
    expect(surfaceDelaySeconds(T0 + 5000, T0, 'exact')).toBe(5);
    expect(surfaceDelaySeconds(T0 + 5000, T0, 'within-second')).toBe(5);
    expect(surfaceDelaySeconds(T0 + 5000, T0 + 1, 'exact')).toBe(4);
    expect(surfaceDelaySeconds(T0 + 5000, T0 + 1, 'within-second')).toBe(5);
    expect(surfaceDelaySeconds(T0 + 5000, T0 + 4999, 'exact')).toBe(0);
    expect(surfaceDelaySeconds(T0 + 5000, T0 + 4999, 'within-second')).toBe(1);
    // Unset is the default, exact.
    expect(surfaceDelaySeconds(T0 + 5000, T0 + 1, undefined)).toBe(4);
  });

  it('a start already past is sent at once under both', () => {
    for (const precision of ['exact', 'within-second'] as const) {
      expect(surfaceDelaySeconds(T0, T0, precision)).toBe(0);
      expect(surfaceDelaySeconds(T0, T0 + 1, precision)).toBe(0);
      expect(surfaceDelaySeconds(T0, T0 + 60_000, precision)).toBe(0);
    }
  });

  it('for every send moment, to the millisecond: within-second surfaces in [start, start + 1 s), exact in (start - 1 s, start]', () => {
    // A jittered start lies on any millisecond; sends at any millisecond of the 20 s before it.
    const startAt = T0 + 12_345;
    for (let now = startAt - 20_000; now <= startAt; now += 7) {
      const within = now + surfaceDelaySeconds(startAt, now, 'within-second') * 1000;
      expect(within).toBeGreaterThanOrEqual(startAt);
      expect(within).toBeLessThan(startAt + 1000);
      const exact = now + surfaceDelaySeconds(startAt, now, 'exact') * 1000;
      expect(exact).toBeLessThanOrEqual(startAt);
      expect(exact).toBeGreaterThan(startAt - 1000);
    }
  });
});

/** The instant (by the queue's clock) each job's message is first visible, stepping the clock 100 ms at a time. */
function surfacing(engine: MemoryEngine, clock: ManualClock, jobIds: readonly string[], until: number): Record<string, number> {
  const first: Record<string, number> = {};
  for (; clock.now() <= until; clock.advance(100)) {
    for (const message of engine.workQueue.messages()) {
      if (jobIds.includes(message.key.jobId) && message.visibleAt <= clock.now()) first[message.key.jobId] ??= clock.now();
    }
  }
  return first;
}

describe('the scanner sends by the job start precision', () => {
  it('scanned at a sub-second moment: the exact job surfaces in the second before its start, the within-second one at or after it', async () => {
    const clock = new ManualClock(T0 + 300);
    const engine = createMemoryEngine(clock);
    // Jittered too: the start is then on a millisecond of its own, which the rounding must respect.
    for (const [id, precision] of [
      ['exact', 'exact'],
      ['within', 'within-second'],
      ['within-jittered', 'within-second'],
    ] as const) {
      await engine.register(
        { id, schedule: '10 0 12 1 6 *', ...(id.endsWith('jittered') && { jitter: '3s' }), policies: { startPrecision: precision } },
        noop,
      );
    }
    await engine.scanner('s').scanShard(0);
    const jobs = await Promise.all(['exact', 'within', 'within-jittered'].map(async (id) => (await engine.jobs().get(id)) as StoredJob));
    const startOf = (job: StoredJob): number => startAtOf({ jobId: job.id, scheduledAt: T0 + 10_000, policies: job.policies });
    const [exact, within, jittered] = jobs as [StoredJob, StoredJob, StoredJob];
    expect(startOf(jittered) % 1000).not.toBe(0);
    clock.set(T0 + 8000);
    const seen = surfacing(engine, clock, ['exact', 'within', 'within-jittered'], T0 + 14_000);
    expect(seen.exact).toBeLessThan(startOf(exact));
    expect(seen.exact).toBeGreaterThan(startOf(exact) - 1000);
    for (const job of [within, jittered]) {
      expect(seen[job.id], job.id).toBeGreaterThanOrEqual(startOf(job));
      expect(seen[job.id], job.id).toBeLessThan(startOf(job) + 1000);
    }
  });

  it('across a DST gap (Europe/Berlin, 29 March): the shifted occurrence surfaces at or after its instant', async () => {
    // 02:30 local does not exist; shifted by the gap to 03:30 CEST, 01:30Z.
    const shifted = Date.parse('2026-03-29T01:30:00Z');
    const clock = new ManualClock(shifted - 20_000 + 650);
    const engine = createMemoryEngine(clock);
    await engine.register(
      { id: 'berlin', schedule: '30 2 * * *', timeZone: 'Europe/Berlin', policies: { startPrecision: 'within-second' } },
      noop,
    );
    await engine.scanner('s').scanShard(0);
    const [message] = engine.workQueue.messages();
    expect(message?.key.scheduledAt).toBe(shifted);
    expect(message!.visibleAt).toBeGreaterThanOrEqual(shifted);
    expect(message!.visibleAt).toBeLessThan(shifted + 1000);
  });
});

describe('the worker by the job start precision', () => {
  /** A job due at T0 + 10 s, scanned at T0 + 300 ms; the clock set to when its message surfaced. */
  async function surfaced(precision: 'exact' | 'within-second'): Promise<{ engine: MemoryEngine; clock: ManualClock }> {
    const clock = new ManualClock(T0 + 300);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: precision, schedule: '10 0 12 1 6 *', policies: { startPrecision: precision } }, noop);
    await engine.scanner('s').scanShard(0);
    clock.set(engine.workQueue.messages()[0]!.visibleAt);
    return { engine, clock };
  }

  it('within-second: surfaced after its second, started at once (no wait: the manual clock never moves) and committed once', async () => {
    const { engine, clock } = await surfaced('within-second');
    expect(clock.now()).toBe(T0 + 10_300);
    expect(await engine.drain(engine.worker('w'))).toBe(1);
    const [claimed] = engine.events.ofType('claimed');
    const [started] = engine.events.ofType('started');
    expect(Date.parse(started!.at)).toBe(Date.parse(claimed!.at));
    expect(started!.startLagMs).toBe(300);
    expect(engine.events.ofType('committed')).toHaveLength(1);
    expect((await engine.slices.get({ jobId: 'within-second', scheduledAt: T0 + 10_000 }))?.status).toBe('SUCCEEDED');
  });

  it('exact: surfaced in the second before, claimed then, started on the second once the clock reaches it', async () => {
    const { engine, clock } = await surfaced('exact');
    expect(clock.now()).toBe(T0 + 9300);
    const draining = engine.drain(engine.worker('w'));
    const claimed = await engine.nextEvent((event) => event.type === 'claimed');
    expect(Date.parse(claimed.at)).toBe(T0 + 9300);
    expect(engine.events.ofType('started')).toEqual([]);
    clock.set(T0 + 10_000);
    await draining;
    const [started] = engine.events.ofType('started');
    expect(Date.parse(started!.at)).toBe(T0 + 10_000);
    expect(started!.startLagMs).toBe(0);
  });

  it('within-second, on a worker whose clock is 400 ms behind the scanner: it waits for its own second, never starting before it', async () => {
    const { engine, clock } = await surfaced('within-second');
    const behind = new OffsetClock(-400, clock);
    const draining = engine.drain(engine.worker('w', { clock: behind }));
    await engine.nextEvent((event) => event.type === 'claimed');
    expect(engine.events.ofType('started')).toEqual([]);
    clock.set(T0 + 10_400);
    await draining;
    const [started] = engine.events.ofType('started');
    expect(Date.parse(started!.at)).toBe(T0 + 10_000);
  });
});

describe('the policy', () => {
  it('is exact by default; an explicit exact and none are the same definition (the default is not stored)', () => {
    const base = { id: 'j', schedule: '0 0 * * *', handler: 'h' };
    expect(parseJobSpec(base).policies).not.toHaveProperty('startPrecision');
    expect(parseJobSpec({ ...base, policies: { startPrecision: 'exact' } })).toEqual(parseJobSpec(base));
    expect(parseJobSpec({ ...base, policies: { startPrecision: 'within-second' } }).policies.startPrecision).toBe('within-second');
  });

  it('a bad value is refused naming the field and the value', () => {
    const bad = (): unknown => parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', policies: { startPrecision: 'sloppy' } });
    expect(bad).toThrowError(InvalidJobSpecError);
    expect(bad).toThrowError('invalid policies.startPrecision "sloppy": must be "exact" or "within-second"');
  });

  it('round-trips through the stored job item; an exact job item holds no precision at all', () => {
    const stored = (spec: unknown): StoredJob => ({
      ...parseJobSpec(spec),
      shard: 1,
      nextFireAt: T0,
      version: 1,
      generation: 1,
      createdAt: T0,
      updatedAt: T0,
    });
    const within = stored({ id: 'j', schedule: '0 0 * * *', handler: 'h', policies: { startPrecision: 'within-second' } });
    expect(toStoredJob(jobItem(within))).toEqual(within);
    const exact = stored({ id: 'j', schedule: '0 0 * * *', handler: 'h', policies: { startPrecision: 'exact' } });
    expect(JSON.stringify(jobItem(exact))).not.toContain('startPrecision');
    expect(toStoredJob(jobItem(exact))).toEqual(exact);
  });
});
