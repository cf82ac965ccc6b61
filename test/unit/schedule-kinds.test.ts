/**
 * The schedule kinds (rate, at, cron), jitter and the misfire policy: pure
 * rules, then the real Scanner and Worker over the in-memory stores on a
 * ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { MISFIRE_THRESHOLD_MS, planAdvance } from '../../lib/core/advance-plan.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { jitterOffsetMs, startAtOf } from '../../lib/core/jitter.ts';
import { NEVER, nextOccurrenceOf } from '../../lib/core/job-lifecycle.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import { nextOccurrenceAtOrAfter, occurrencesBetween, validateSchedule } from '../../lib/core/schedule.ts';
import { parseScheduleExpression } from '../../lib/core/schedule-kinds.ts';
import { whyNotRun } from '../../lib/cli/runs-command.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';

const utc = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

function invalid(run: () => unknown): InvalidJobSpecError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidJobSpecError) return error;
    throw error;
  }
  throw new Error('expected an InvalidJobSpecError');
}

describe('rate(...) schedules', () => {
  it('fire at the multiples of the interval since the epoch, whatever the range start or zone', () => {
    const schedule = { cron: 'rate(5 minutes)', timeZone: 'Asia/Kolkata' };
    const found = occurrencesBetween(schedule, utc('2026-01-01T00:03:10Z'), utc('2026-01-01T00:21:00Z'), 100).map(iso);
    expect(found).toEqual(['2026-01-01T00:05:00.000Z', '2026-01-01T00:10:00.000Z', '2026-01-01T00:15:00.000Z', '2026-01-01T00:20:00.000Z']);
    expect(occurrencesBetween(schedule, utc('2026-01-01T00:05:00Z'), utc('2026-01-01T00:05:01Z'), 10).map(iso)).toEqual([
      '2026-01-01T00:05:00.000Z',
    ]);
  });

  it('accept seconds, singular and plural units, and respect the limit', () => {
    const from = utc('2026-01-01T00:00:00Z');
    expect(occurrencesBetween({ cron: 'rate(30 seconds)', timeZone: 'UTC' }, from, from + 120_000, 3).map((t) => t - from)).toEqual([
      0, 30_000, 60_000,
    ]);
    expect(nextOccurrenceAtOrAfter({ cron: 'rate(1 hour)', timeZone: 'UTC' }, from + 1)).toBe(from + 3_600_000);
    // 2026-01-01 is day 20,454 of the epoch, an even one.
    expect(nextOccurrenceAtOrAfter({ cron: 'rate(2 days)', timeZone: 'UTC' }, from + 1)).toBe(utc('2026-01-03T00:00:00Z'));
  });

  it('are refused with the field, the value and the rule', () => {
    expect(invalid(() => parseScheduleExpression('rate(5 fortnights)')).message).toBe(
      'invalid schedule "rate(5 fortnights)": unknown unit "fortnight"; use second(s), minute(s), hour(s) or day(s)',
    );
    expect(invalid(() => parseScheduleExpression('rate(0 minutes)')).message).toBe(
      'invalid schedule "rate(0 minutes)": the interval must be at least 1',
    );
    expect(invalid(() => parseScheduleExpression('rate(five minutes)')).reason).toMatch(/^a rate is written rate\(N unit\)/);
    expect(invalid(() => parseScheduleExpression('rate(400 days)')).reason).toMatch(/at most 366 days/);
    expect(invalid(() => parseJobSpec({ id: 'r', schedule: 'rate(5 minute', handler: 'h' })).field).toBe('schedule');
  });
});

describe('at(...) one-time schedules', () => {
  it('fire once, at that local time in the job zone', () => {
    const schedule = { cron: 'at(2026-12-24T18:00:00)', timeZone: 'Europe/Berlin' };
    expect(occurrencesBetween(schedule, 0, Number.MAX_SAFE_INTEGER, 10).map(iso)).toEqual(['2026-12-24T17:00:00.000Z']);
    expect(nextOccurrenceAtOrAfter(schedule, utc('2026-12-24T17:00:01Z'))).toBeUndefined();
    expect(occurrencesBetween(schedule, utc('2026-12-24T17:00:00Z'), utc('2026-12-24T17:00:01Z'), 1)).toHaveLength(1);
  });

  it('follow the DST policy in a gap and run once in a repeat', () => {
    const gap = { cron: 'at(2026-03-08T02:30:00)', timeZone: 'America/New_York' };
    expect(occurrencesBetween(gap, 0, Number.MAX_SAFE_INTEGER, 10).map(iso)).toEqual(['2026-03-08T07:30:00.000Z']);
    const repeat = { cron: 'at(2026-11-01T01:30:00)', timeZone: 'America/New_York', dst: { gap: 'shift', repeat: 'twice' } as const };
    expect(occurrencesBetween(repeat, 0, Number.MAX_SAFE_INTEGER, 10).map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
    const skipped = { cron: 'at(2026-03-08T02:30:00)', timeZone: 'America/New_York', dst: { gap: 'skip', repeat: 'once' } as const };
    expect(invalid(() => validateSchedule(skipped)).reason).toMatch(/^never fires: that local time does not exist in America\/New_York/);
  });

  it('are refused when the date or the form is wrong', () => {
    expect(invalid(() => parseScheduleExpression('at(2026-02-30T10:00:00)')).message).toBe(
      'invalid schedule "at(2026-02-30T10:00:00)": no such date or time',
    );
    expect(invalid(() => parseScheduleExpression('at(2026-12-24 18:00)')).reason).toMatch(
      /^a one-time schedule is written at\(YYYY-MM-DDTHH:MM:SS\)/,
    );
  });

  it('may delete themselves; a repeating schedule may not', () => {
    const spec = parseJobSpec({ id: 'once', schedule: 'at(2026-12-24T18:00:00)', handler: 'h', policies: { afterOneTime: 'delete' } });
    expect(spec.policies.afterOneTime).toBe('delete');
    const error = invalid(() => parseJobSpec({ id: 'r', schedule: 'rate(1 minute)', handler: 'h', policies: { afterOneTime: 'delete' } }));
    expect(error.field).toBe('policies.afterOneTime');
    expect(error.reason).toBe('only a one-time at(...) schedule can delete itself; "rate(1 minute)" repeats');
  });
});

describe('jitter', () => {
  it('is a fixed offset per job id inside the window, and zero without jitter', () => {
    const offsets = Array.from({ length: 200 }, (_, i) => jitterOffsetMs(`job-${i}`, 90_000));
    expect(offsets.every((ms) => ms >= 0 && ms < 90_000)).toBe(true);
    expect(jitterOffsetMs('job-7', 90_000)).toBe(offsets[7]);
    // Spread, not piled up: 200 jobs land in most of the window's nine 10-second buckets.
    expect(new Set(offsets.map((ms) => Math.floor(ms / 10_000))).size).toBe(9);
    expect(jitterOffsetMs('job-7', undefined)).toBe(0);
    expect(startAtOf({ jobId: 'job-7', scheduledAt: 1_000_000, policies: { jitterMs: 90_000 } })).toBe(1_000_000 + (offsets[7] as number));
  });

  it('is written jitter: "90s" (or ms), and a bad one names the field', () => {
    expect(parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', jitter: '90s' }).policies.jitterMs).toBe(90_000);
    expect(parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', jitter: '2m' }).policies.jitterMs).toBe(120_000);
    expect(parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', jitter: 1500 }).policies.jitterMs).toBe(1500);
    expect(parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h' }).policies.jitterMs).toBeUndefined();
    const error = invalid(() => parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', jitter: '90 parsecs' }));
    expect(error.message).toBe('invalid jitter "90 parsecs": must be a duration from 0 to 600s, like "90s", "2m" or "500ms"');
    expect(invalid(() => parseJobSpec({ id: 'j', schedule: '0 0 * * *', handler: 'h', jitter: '11m' })).field).toBe('jitter');
  });
});

describe('misfire policy (planAdvance)', () => {
  const schedule = { cron: '*/10 * * * * *', timeZone: 'UTC' };
  const now = utc('2026-06-01T12:10:00Z');
  const base = { schedule, now, lookaheadMs: 30_000, catchUpWindowMs: 300_000, limit: 99 };
  const afterOutage = { ...base, nextFireAt: utc('2026-06-01T12:00:00Z') };

  it('all: runs every due occurrence inside the window, MISSED before it', () => {
    const plan = planAdvance({ ...afterOutage, misfire: 'all' });
    expect(plan.missed).toEqual({ count: 30, from: utc('2026-06-01T12:00:00Z'), to: utc('2026-06-01T12:05:00Z') });
    expect(plan.skipped).toBeUndefined();
    expect(iso(plan.occurrences[0] as number)).toBe('2026-06-01T12:05:00.000Z');
    expect(plan.occurrences).toHaveLength(33);
  });

  it('latest: runs the latest due occurrence only; the others are one SKIPPED misfire range', () => {
    const plan = planAdvance({ ...afterOutage, misfire: 'latest' });
    expect(plan.missed?.count).toBe(30);
    expect(plan.skipped).toEqual({ count: 29, from: utc('2026-06-01T12:05:00Z'), to: utc('2026-06-01T12:09:50Z'), reason: 'misfire' });
    expect(plan.occurrences.slice(0, 2).map(iso)).toEqual(['2026-06-01T12:09:50.000Z', '2026-06-01T12:10:00.000Z']);
  });

  it('none: runs nothing already due; from now on as usual', () => {
    const plan = planAdvance({ ...afterOutage, misfire: 'none' });
    expect(plan.skipped).toEqual({ count: 30, from: utc('2026-06-01T12:05:00Z'), to: now, reason: 'misfire' });
    expect(iso(plan.occurrences[0] as number)).toBe('2026-06-01T12:10:00.000Z');
    expect(plan.occurrences).toHaveLength(3);
  });

  it('does not apply to a scan less than the threshold late', () => {
    const plan = planAdvance({ ...base, nextFireAt: now - MISFIRE_THRESHOLD_MS + 1000, misfire: 'none' });
    expect(plan.skipped).toBeUndefined();
    expect(iso(plan.occurrences[0] as number)).toBe('2026-06-01T12:09:10.000Z');
  });

  it('the record says why in cronfence runs', () => {
    expect(whyNotRun({ status: 'SKIPPED', skipReason: 'misfire', missedUntil: now, missedCount: 30 })).toBe(
      'misfire: 30 occurrences until 2026-06-01T12:10:00Z',
    );
    expect(whyNotRun({ status: 'MISSED', missedUntil: now, missedCount: 3 })).toBe(
      'outside the catch-up window: 3 occurrences until 2026-06-01T12:10:00Z',
    );
    expect(whyNotRun({ status: 'SKIPPED', skipReason: 'paused' })).toBe('paused');
    expect(whyNotRun({ status: 'SUCCEEDED' })).toBeUndefined();
  });
});

describe('over the real Scanner and Worker (in-memory stores, manual clock)', () => {
  const T0 = utc('2026-06-01T12:00:00Z');

  it('a misfire-"latest" job back from an outage: one SKIPPED range with an event, the latest runs, no MISSED', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'latest', schedule: 'rate(10 seconds)', policies: { misfire: 'latest' } }, async () => {});
    clock.set(T0 + 120_000);
    await engine.scanner('scanner').scanShard(0);
    clock.set(T0 + 121_000);
    await engine.drain(engine.worker('worker'));
    const slices = await engine.jobs().slicesOf('latest', 0);
    const skipped = slices.filter((slice) => slice.status === 'SKIPPED');
    expect(skipped.map((slice) => [iso(slice.scheduledAt), slice.skipReason, slice.missedCount])).toEqual([
      ['2026-06-01T12:00:00.000Z', 'misfire', 11],
    ]);
    expect(slices.filter((slice) => slice.status === 'SUCCEEDED').map((slice) => iso(slice.scheduledAt))).toEqual([
      '2026-06-01T12:01:50.000Z',
      '2026-06-01T12:02:00.000Z',
    ]);
    expect(engine.events.ofType('skipped').map((event) => [event.reason, event.count, event.until])).toEqual([
      ['misfire', 11, '2026-06-01T12:01:50Z'],
    ]);
    expect(engine.events.ofType('missed')).toEqual([]);
  });

  it('a jittered job: its message surfaces at the jittered second, its key stays nominal', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'ramp', schedule: '0 * * * * *', jitter: '20s' }, async () => {});
    await engine.scanner('scanner', { lookaheadMs: 60_000 }).scanShard(0);
    const offset = jitterOffsetMs('ramp', 20_000);
    const [message] = engine.workQueue.messages();
    // The nominal key, and the generation it was sent for (never a definition).
    expect(message?.key).toEqual({ jobId: 'ramp', scheduledAt: T0, generation: job.generation });
    expect(message?.visibleAt).toBe(T0 + Math.floor(offset / 1000) * 1000);
    clock.set(T0 + offset);
    await engine.drain(engine.worker('worker'));
    const started = engine.events.ofType('started');
    expect(started.map((event) => event.executionKey)).toEqual(['ramp:2026-06-01T12:00:00Z']);
    expect(started[0]?.startLagMs).toBe(0);
    expect(Date.parse(started[0]?.at ?? '')).toBe(T0 + offset);
  });

  it('a one-time job runs once, then completes (kept) or deletes itself', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'keep', schedule: 'at(2026-06-01T14:00:10)', timeZone: 'Europe/Berlin' }, async () => {});
    await engine.register(
      { id: 'gone', schedule: 'at(2026-06-01T14:00:10)', timeZone: 'Europe/Berlin', policies: { afterOneTime: 'delete' } },
      async () => {},
    );
    const worker = engine.worker('worker', { oneTimeJobs: engine.jobs() });
    for (let second = 0; second <= 40; second += 5) {
      clock.set(T0 + second * 1000);
      await engine.scanner('scanner').scanShard(0);
      await engine.drain(worker);
    }
    for (const id of ['keep', 'gone']) {
      expect(
        (await engine.jobs().slicesOf(id, 0)).map((slice) => [iso(slice.scheduledAt), slice.status]),
        id,
      ).toEqual([['2026-06-01T12:00:10.000Z', 'SUCCEEDED']]);
    }
    // Kept, with no occurrence left; and no scan placed it in the wheel again after its slot.
    const keep = await engine.jobs().get('keep');
    expect(keep && nextOccurrenceOf(keep, clock.now())).toBe(NEVER);
    const entries = engine.tables.wheelShard(0).entries.filter((entry) => entry.jobId === 'keep');
    expect(entries.map((entry) => entry.from)).toEqual(entries.map(() => utc('2026-06-01T12:00:10Z')));
    expect(await engine.jobs().get('gone')).toBeUndefined();
  });
});
