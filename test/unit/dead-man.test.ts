/**
 * The dead-man's switch rule (lib/core/dead-man.ts) with a manual clock: a
 * job is stale once it has had no final slot for k intervals (plus its
 * timeout), counted from its last final slot or from when it last became
 * active, so pauses, resumes and timed pauses never read as silence.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { deadManVerdict } from '../../lib/core/dead-man.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/ports.ts';

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
    expect(deadManVerdict({ job: every30s, lastFinalAt, now: T0 + MINUTE + TIMEOUT + 1 })).toMatchObject({ kind: 'stale', intervalMs: 30_000 });
    const once = job('at(2026-12-01T12:05:00)');
    expect(deadManVerdict({ job: once, lastFinalAt: T0 + 5 * MINUTE, now: T0 + 60 * MINUTE })).toEqual({ kind: 'done' });
    // Not run yet and past its time (plus k intervals it has none of, so by its occurrence plus the timeout): stale.
    expect(deadManVerdict({ job: once, lastFinalAt: undefined, now: T0 + 60 * MINUTE }).kind).toBe('stale');
  });

  it('a job running on time is ok; one with no final slot for k intervals plus its timeout is stale, naming since when', () => {
    const clock = new ManualClock(T0 + 12 * MINUTE);
    const lastFinalAt = T0 + 10 * MINUTE;
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() })).toEqual({ kind: 'ok', deadline: lastFinalAt + 10 * MINUTE + TIMEOUT });
    clock.set(lastFinalAt + 10 * MINUTE + TIMEOUT);
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() }).kind).toBe('ok');
    clock.advance(1);
    expect(deadManVerdict({ job: every5m, lastFinalAt, now: clock.now() })).toEqual({
      kind: 'stale',
      silentSince: lastFinalAt,
      deadline: lastFinalAt + 10 * MINUTE + TIMEOUT,
      intervalMs: 5 * MINUTE,
      lastFinalAt,
    });
  });

  it('k is configurable', () => {
    const now = T0 + 16 * MINUTE;
    expect(deadManVerdict({ job: every5m, lastFinalAt: T0, now, factor: 2 }).kind).toBe('stale');
    expect(deadManVerdict({ job: every5m, lastFinalAt: T0, now, factor: 4 }).kind).toBe('ok');
  });

  it('a job that never ran is judged from its creation', () => {
    expect(deadManVerdict({ job: every5m, lastFinalAt: undefined, now: T0 + 9 * MINUTE }).kind).toBe('ok');
    expect(deadManVerdict({ job: every5m, lastFinalAt: undefined, now: T0 + 11 * MINUTE })).toMatchObject({ kind: 'stale', silentSince: T0, lastFinalAt: undefined });
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
    expect(deadManVerdict({ job: timed, lastFinalAt: T0 - MINUTE, now: until + 11 * MINUTE })).toMatchObject({ kind: 'stale', silentSince: until });
  });

  it('the interval is the schedule’s own: a daily job is silent after two days, not two minutes', () => {
    const lastFinalAt = Date.parse('2026-12-01T06:00:00Z');
    const daily = job('0 6 * * *', { createdAt: lastFinalAt - 86_400_000, updatedAt: lastFinalAt - 86_400_000 });
    expect(deadManVerdict({ job: daily, lastFinalAt, now: Date.parse('2026-12-03T05:00:00Z') }).kind).toBe('ok');
    expect(deadManVerdict({ job: daily, lastFinalAt, now: Date.parse('2026-12-03T06:01:00Z') })).toMatchObject({ kind: 'stale', intervalMs: 86_400_000 });
  });

  it('a schedule with one occurrence left in sight (a one-time or a yearly job) is due by that occurrence plus its timeout', () => {
    const created = Date.parse('2027-06-01T00:00:00Z');
    const leapDay = job('0 0 29 2 *', { createdAt: created, updatedAt: created });
    const occurrence = Date.parse('2028-02-29T00:00:00Z');
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: occurrence + TIMEOUT })).toEqual({ kind: 'ok', deadline: occurrence + TIMEOUT });
    expect(deadManVerdict({ job: leapDay, lastFinalAt: undefined, now: occurrence + TIMEOUT + 1 })).toMatchObject({ kind: 'stale', silentSince: created });
    expect(deadManVerdict({ job: leapDay, lastFinalAt: occurrence, now: occurrence + 86_400_000 }).kind).toBe('done');
  });

  it('a schedule with nothing left after its last final slot is done, not stale', () => {
    const once = job('0 0 29 2 *', { createdAt: T0, updatedAt: T0 });
    // 29 February next falls in 2028: beyond the look-ahead of the interval, so nothing is due.
    expect(deadManVerdict({ job: once, lastFinalAt: undefined, now: T0 + 86_400_000 }).kind).toBe('done');
  });
});
