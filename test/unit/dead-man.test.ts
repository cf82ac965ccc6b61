/**
 * The dead-man's switch rule (lib/core/dead-man.ts) with a manual clock: a
 * job is stale once it has had no final slot for k intervals (plus its
 * timeout), counted from its last final slot or from when it last became
 * active, so pauses, resumes and timed pauses never read as silence.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { deadManVerdict, freshnessProbes } from '../../lib/core/dead-man.ts';
import { jitterOffsetMs } from '../../lib/core/jitter.ts';
import { occurrencesBetween, scheduleOf } from '../../lib/core/schedule.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';

const T0 = Date.parse('2026-12-01T12:00:00Z');
const MINUTE = 60_000;
const TIMEOUT = 10_000;

function job(schedule: string, overrides: Partial<StoredJob> = {}): StoredJob {
  const spec = parseJobSpec({ id: 'j', schedule, handler: 'h', policies: { timeoutMs: TIMEOUT } });
  return { ...spec, shard: 0, nextFireAt: T0, version: 1, generation: 1, createdAt: T0, updatedAt: T0, ...overrides };
}

describe('dead-man verdict', () => {
  const every5m = job('*/5 * * * *');

  it('understands rate() and at() schedules: a rate job goes stale after k of its intervals, a one-time job that ran is done', () => {
    const every30s = job('rate(30 seconds)');
    const lastFinalAt = T0;
    expect(deadManVerdict({ job: every30s, lastFinalAt, now: T0 + MINUTE + TIMEOUT })).toMatchObject({ kind: 'ok' });
    expect(deadManVerdict({ job: every30s, lastFinalAt, now: T0 + MINUTE + TIMEOUT + 1 })).toMatchObject({
      kind: 'stale',
      intervalMs: 30_000,
    });
    const once = job('at(2026-12-01T12:05:00)');
    expect(deadManVerdict({ job: once, lastFinalAt: T0 + 5 * MINUTE, now: T0 + 60 * MINUTE })).toEqual({ kind: 'done' });
    // Not run yet and past its time (plus k intervals it has none of, so by its occurrence plus the timeout): stale.
    expect(deadManVerdict({ job: once, lastFinalAt: undefined, now: T0 + 60 * MINUTE }).kind).toBe('stale');
  });

  it('a job running on time is ok; one with no final slot for k intervals plus its timeout is stale, naming since when', () => {
    const clock = new ManualClock(T0 + 12 * MINUTE);
    const lastFinalAt = T0 + 10 * MINUTE;
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() })).toEqual({
      kind: 'ok',
      deadline: lastFinalAt + 10 * MINUTE + TIMEOUT,
    });
    clock.set(lastFinalAt + 10 * MINUTE + TIMEOUT);
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() }).kind).toBe('ok');
    clock.advance(1);
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() })).toEqual({
      kind: 'stale',
      silentSince: lastFinalAt,
      deadline: lastFinalAt + 10 * MINUTE + TIMEOUT,
      intervalMs: 5 * MINUTE,
      lastFinalAt,
      overdueAt: lastFinalAt + 5 * MINUTE,
    });
  });

  it('k is configurable', () => {
    const now = T0 + 16 * MINUTE;
    expect(deadManVerdict({ job: every5m, lastFinalAt: T0, now, factor: 2 }).kind).toBe('stale');
    expect(deadManVerdict({ job: every5m, lastFinalAt: T0, now, factor: 4 }).kind).toBe('ok');
  });

  it('a job that never ran is judged from its creation', () => {
    expect(deadManVerdict({ job: every5m, lastFinalAt: undefined, now: T0 + 9 * MINUTE }).kind).toBe('ok');
    expect(deadManVerdict({ job: every5m, lastFinalAt: undefined, now: T0 + 11 * MINUTE })).toMatchObject({
      kind: 'stale',
      silentSince: T0,
      lastFinalAt: undefined,
    });
  });

  it('tolerates pauses: paused is inactive; after a resume or a timed pause’s end the clock starts again', () => {
    const paused = job('*/5 * * * *', { enabled: false, pause: { actor: 'a', reason: 'incident', at: T0 }, updatedAt: T0 });
    expect(deadManVerdict({ job: paused, lastFinalAt: T0 - MINUTE, now: T0 + 3 * 3_600_000 })).toEqual({ kind: 'inactive' });

    const resumed = job('*/5 * * * *', { updatedAt: T0 + 3 * 3_600_000 });
    expect(deadManVerdict({ job: resumed, lastFinalAt: T0 - MINUTE, now: T0 + 3 * 3_600_000 + 9 * MINUTE }).kind).toBe('ok');

    const until = T0 + 3_600_000;
    const timed = job('*/5 * * * *', { enabled: false, pause: { actor: 'a', at: T0, until }, updatedAt: T0 });
    expect(deadManVerdict({ job: timed, lastFinalAt: T0 - MINUTE, now: until - 1 })).toEqual({ kind: 'inactive' });
    expect(deadManVerdict({ job: timed, lastFinalAt: T0 - MINUTE, now: until + 9 * MINUTE }).kind).toBe('ok');
    expect(deadManVerdict({ job: timed, lastFinalAt: T0 - MINUTE, now: until + 11 * MINUTE })).toMatchObject({
      kind: 'stale',
      silentSince: until,
    });
  });

  it('the interval is the schedule’s own: a daily job is silent after two days, not two minutes', () => {
    const lastFinalAt = Date.parse('2026-12-01T06:00:00Z');
    const daily = job('0 6 * * *', { createdAt: lastFinalAt - 86_400_000, updatedAt: lastFinalAt - 86_400_000 });
    expect(deadManVerdict({ job: daily, lastFinalAt, now: Date.parse('2026-12-03T05:00:00Z') }).kind).toBe('ok');
    expect(deadManVerdict({ job: daily, lastFinalAt, now: Date.parse('2026-12-03T06:01:00Z') })).toMatchObject({
      kind: 'stale',
      intervalMs: 86_400_000,
    });
  });

  it('a schedule with one occurrence left in sight (a one-time or a yearly job) is due by that occurrence plus its timeout', () => {
    const created = Date.parse('2027-06-01T00:00:00Z');
    const leapDay = job('0 0 29 2 *', { createdAt: created, updatedAt: created });
    const occurrence = Date.parse('2028-02-29T00:00:00Z');
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: occurrence + TIMEOUT })).toEqual({
      kind: 'ok',
      deadline: occurrence + TIMEOUT,
    });
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: occurrence + TIMEOUT + 1 })).toMatchObject({
      kind: 'stale',
      silentSince: created,
    });
    // Run: the next one is 2032's, due by then.
    expect(deadManVerdict({ job: leapDay, lastFinalAt: occurrence, now: occurrence + 86_400_000 })).toEqual({
      kind: 'ok',
      deadline: Date.parse('2032-02-29T00:00:00Z') + TIMEOUT,
    });
  });

  it('watches a rare schedule from its next occurrence however far it is: a missed 29 February is stale, not "done"', () => {
    // Created in December 2026: 29 February is 15 months away (the old rule looked 400 days ahead and called it done for ever).
    const leapDay = job('0 0 29 2 *', { createdAt: T0, updatedAt: T0 });
    const occurrence = Date.parse('2028-02-29T00:00:00Z');
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: T0 + 86_400_000 })).toEqual({
      kind: 'ok',
      deadline: occurrence + TIMEOUT,
    });
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: occurrence + TIMEOUT + 1 })).toMatchObject({
      kind: 'stale',
      silentSince: T0,
      overdueAt: occurrence,
    });
    // A one-time job whose only slot is final has nothing left: done.
    const once = job('at(2026-12-01T12:05:00)');
    expect(deadManVerdict({ job: once, lastFinalAt: T0 + 5 * MINUTE, now: T0 + 400 * 86_400_000 })).toEqual({ kind: 'done' });
  });

  it('a quarterly job is due by its next occurrence (rare), a monthly one by k of its intervals', () => {
    const created = Date.parse('2026-12-15T00:00:00Z');
    const quarterly = job('0 0 1 1,4,7,10 *', { createdAt: created, updatedAt: created });
    const january = Date.parse('2027-01-01T00:00:00Z');
    expect(deadManVerdict({ job: quarterly, lastFinalAt: undefined, now: january + TIMEOUT + 1 })).toMatchObject({
      kind: 'stale',
      overdueAt: january,
    });
    const monthly = job('0 0 1 * *', { createdAt: created, updatedAt: created });
    expect(deadManVerdict({ job: monthly, lastFinalAt: undefined, now: january + TIMEOUT + 1 }).kind).toBe('ok');
    expect(deadManVerdict({ job: monthly, lastFinalAt: undefined, now: Date.parse('2027-02-16T00:00:00Z') }).kind).toBe('stale');
  });

  it('gives a within-second job the second its start may come after its slot: a one-time job finishing then is not stale', () => {
    const at = T0 + 5 * MINUTE;
    const exact = job('at(2026-12-01T12:05:00)');
    const within = job('at(2026-12-01T12:05:00)', { policies: { ...exact.policies, startPrecision: 'within-second' } });
    // Judged 0.6 s after the run's timeout, counted from the second: the within-second run may still be going.
    const now = at + TIMEOUT + 600;
    expect(deadManVerdict({ job: exact, lastFinalAt: undefined, now }).kind).toBe('stale');
    expect(deadManVerdict({ job: within, lastFinalAt: undefined, now })).toEqual({ kind: 'ok', deadline: at + TIMEOUT + 1000 });
    expect(deadManVerdict({ job: within, lastFinalAt: undefined, now: at + TIMEOUT + 1001 }).kind).toBe('stale');
  });

  it('is jitter-aware: a jittered job whose slots end after their jittered start is never stale while it runs', () => {
    // 13 jittered per-5-second jobs, each slot final 1 s after its jittered start; judged every second for 3 minutes.
    const clock = new ManualClock(T0);
    const jobs = Array.from({ length: 13 }, (_, i) =>
      job('*/5 * * * * *', { id: `jittered-${i}`, policies: { ...job('* * * * *').policies, jitterMs: 60_000 } }),
    );
    const stale: string[] = [];
    for (; clock.now() < T0 + 3 * MINUTE; clock.advance(1000)) {
      for (const each of jobs) {
        const offset = jitterOffsetMs(each.id, 60_000);
        // The latest slot final by now: started at its second plus the offset, done a second later.
        const finals = occurrencesBetween(scheduleOf(each), T0, clock.now() - offset - 1000 + 1, 1000);
        const verdict = deadManVerdict({ job: each, lastFinalAt: finals.at(-1), now: clock.now() });
        if (verdict.kind === 'stale') stale.push(`${each.id} at ${new Date(clock.now()).toISOString()}`);
      }
    }
    expect(jobs.filter((each) => jitterOffsetMs(each.id, 60_000) > 10_000 + TIMEOUT).length).toBeGreaterThan(5);
    expect(stale).toEqual([]);
    // And one that stops is still found: no final slot after T0 + 1 min.
    const stopped = jobs[0] as StoredJob;
    const deadline = T0 + MINUTE + 10_000 + jitterOffsetMs(stopped.id, 60_000) + TIMEOUT;
    expect(deadManVerdict({ job: stopped, lastFinalAt: T0 + MINUTE, now: deadline }).kind).toBe('ok');
    expect(deadManVerdict({ job: stopped, lastFinalAt: T0 + MINUTE, now: deadline + 1 }).kind).toBe('stale');
  });

  it('probes the latest k occurrences that have started, jitter included, and none from before the job became active', () => {
    const every5m = job('*/5 * * * *');
    expect(freshnessProbes(every5m, T0 + 23 * MINUTE)).toEqual([T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
    expect(freshnessProbes(every5m, T0 + 23 * MINUTE, 3)).toEqual([T0 + 10 * MINUTE, T0 + 15 * MINUTE, T0 + 20 * MINUTE]);
    expect(freshnessProbes(every5m, T0 + 2 * MINUTE)).toEqual([T0]);
    const jittered = job('*/5 * * * * *', { id: 'jit', policies: { ...every5m.policies, jitterMs: 60_000 } });
    const offset = jitterOffsetMs('jit', 60_000);
    const probes = freshnessProbes(jittered, T0 + 10 * MINUTE);
    expect(probes).toHaveLength(2);
    expect(probes.every((at) => at + offset <= T0 + 10 * MINUTE)).toBe(true);
    expect(probes.at(-1)! + 5000 + offset).toBeGreaterThan(T0 + 10 * MINUTE);
    const daily = job('0 6 * * *', { createdAt: T0 - 30 * 86_400_000, updatedAt: T0 - 30 * 86_400_000 });
    expect(freshnessProbes(daily, T0).map((at) => new Date(at).toISOString())).toEqual([
      '2026-11-30T06:00:00.000Z',
      '2026-12-01T06:00:00.000Z',
    ]);
  });
});
