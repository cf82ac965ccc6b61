import { describe, expect, it } from 'vitest';
import { NEVER, planAdvance } from '../../lib/core/advance-plan.ts';
import { nextOccurrenceAtOrAfter, occurrencesBetween, type Schedule } from '../../lib/core/schedule.ts';
import { DST_CASES, SHIFT_ONCE, SHIFT_TWICE } from '../support/dst-cases.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const utc = (text: string): number => Date.parse(text);
const TICK_MS = 60_000;
const CATCH_UP_MS = 600_000;

interface ScanMode {
  readonly name: string;
  readonly lookaheadMs: number;
  readonly limit: number;
}

const MODES: readonly ScanMode[] = [
  { name: 'lookahead 120 s', lookaheadMs: 120_000, limit: 99 },
  { name: 'lookahead 10 s', lookaheadMs: 10_000, limit: 99 },
  { name: 'lookahead 900 s', lookaheadMs: 900_000, limit: 99 },
  { name: 'lookahead 120 s, limit 3 (paging)', lookaheadMs: 120_000, limit: 3 },
];

/**
 * Scans one job the way the scanner does: a tick every minute, the job due
 * while `nextFireAt < now + lookahead`, one plan per due query (asked again
 * while a plan came back full, as the scanner re-queries a full page).
 */
function scanMinuteByMinute(schedule: Schedule, fromMs: number, toMs: number, mode: ScanMode, nextFireAtMs?: number) {
  let nextFireAt = nextFireAtMs ?? nextOccurrenceAtOrAfter(schedule, fromMs) ?? NEVER;
  const created: number[] = [];
  let missed = 0;
  let createdLate = 0;
  // Tick until a window reaches past `toMs`, so every occurrence before it had its chance.
  for (let now = fromMs; now < toMs + TICK_MS; now += TICK_MS) {
    while (nextFireAt < now + mode.lookaheadMs) {
      const plan = planAdvance({
        schedule,
        nextFireAt,
        now,
        lookaheadMs: mode.lookaheadMs,
        catchUpWindowMs: CATCH_UP_MS,
        limit: mode.limit,
      });
      created.push(...plan.occurrences);
      createdLate += plan.occurrences.filter((at) => at < now).length;
      missed += plan.missed?.count ?? 0;
      expect(plan.nextFireAt).toBeGreaterThan(plan.occurrences.at(-1) ?? nextFireAt - 1);
      nextFireAt = plan.nextFireAt;
      if (plan.occurrences.length < mode.limit) break;
    }
  }
  return { created, nextFireAt, missed, createdLate };
}

describe('the scanner window plan, minute by minute across the 2026 DST changes', () => {
  describe.each(MODES)('$name', (mode) => {
    it.each(DST_CASES)('$name', (dstCase) => {
      const schedule: Schedule = { cron: dstCase.cron, timeZone: dstCase.timeZone, dst: dstCase.dst };
      const from = utc(dstCase.from);
      const to = utc(dstCase.to);
      const { created, nextFireAt, missed, createdLate } = scanMinuteByMinute(schedule, from, to, mode);

      expect(created.filter((at) => at < to).map(iso)).toEqual(dstCase.expected);
      expect(new Set(created).size).toBe(created.length);
      // The union over ticks, in the order created, is the continuous enumeration up to where the job stands.
      expect(created).toEqual(occurrencesBetween(schedule, from, nextFireAt, 1_000_000));
      expect(missed).toBe(0);
      if (mode.lookaheadMs >= TICK_MS) expect(createdLate).toBe(0);
    });
  });
});

describe('nextFireAt is the first occurrence not yet turned into a slice', () => {
  const newYork = (cron: string, dst = SHIFT_ONCE): Schedule => ({ cron, timeZone: 'America/New_York', dst });

  it('an occurrence left out by the limit is the next nextFireAt, and the next plan starts with it', () => {
    const schedule = newYork('*/1 * * * * *');
    const now = utc('2026-03-08T07:00:00Z');
    const first = planAdvance({ schedule, nextFireAt: now - 5000, now, lookaheadMs: 120_000, catchUpWindowMs: CATCH_UP_MS, limit: 3 });
    expect(first.occurrences.map(iso)).toEqual(['2026-03-08T06:59:55.000Z', '2026-03-08T06:59:56.000Z', '2026-03-08T06:59:57.000Z']);
    expect(iso(first.nextFireAt)).toBe('2026-03-08T06:59:58.000Z');
    const second = planAdvance({
      schedule,
      nextFireAt: first.nextFireAt,
      now,
      lookaheadMs: 120_000,
      catchUpWindowMs: CATCH_UP_MS,
      limit: 3,
    });
    expect(second.occurrences[0]).toBe(first.nextFireAt);
  });

  it('pages through a repeated hour in instant order although its wall times come back twice (twice)', () => {
    const schedule = newYork('*/20 1 * * *', SHIFT_TWICE);
    const now = utc('2026-11-01T04:50:00Z');
    const plan = (nextFireAt: number) =>
      planAdvance({ schedule, nextFireAt, now, lookaheadMs: 3 * 3_600_000, catchUpWindowMs: CATCH_UP_MS, limit: 2 });
    const pages = [plan(utc('2026-11-01T05:00:00Z'))];
    while (pages.length < 3) pages.push(plan((pages.at(-1) as { nextFireAt: number }).nextFireAt));
    expect(pages.map((page) => page.occurrences.map(iso))).toEqual([
      ['2026-11-01T05:00:00.000Z', '2026-11-01T05:20:00.000Z'],
      ['2026-11-01T05:40:00.000Z', '2026-11-01T06:00:00.000Z'],
      ['2026-11-01T06:20:00.000Z', '2026-11-01T06:40:00.000Z'],
    ]);
    expect(iso((pages.at(-1) as { nextFireAt: number }).nextFireAt)).toBe('2026-11-02T06:00:00.000Z');
  });

  it('reports occurrences older than the catch-up window as missed, from the first one missed', () => {
    const schedule: Schedule = { cron: '* * * * *', timeZone: 'UTC' };
    const now = utc('2026-06-01T12:00:00Z');
    const plan = planAdvance({ schedule, nextFireAt: now - 3_600_000, now, lookaheadMs: 120_000, catchUpWindowMs: CATCH_UP_MS, limit: 99 });
    expect(plan.missed).toEqual({ count: 50, from: now - 3_600_000, to: now - CATCH_UP_MS });
    expect(plan.occurrences).toHaveLength(12); // 10 in the catch-up window, 2 in the lookahead
    expect(iso(plan.occurrences[0] as number)).toBe('2026-06-01T11:50:00.000Z');
    expect(iso(plan.nextFireAt)).toBe('2026-06-01T12:02:00.000Z');
  });
});

describe('creating, updating or re-enabling a job inside the repeated hour', () => {
  // The job repository sets nextFireAt to the first occurrence at or after `now` (put, resume).
  it.each([
    ['America/New_York', '*/20 1 * * *', SHIFT_ONCE, '2026-11-01T06:10:00Z', '2026-11-02T06:00:00.000Z'],
    ['America/New_York', '*/20 1 * * *', SHIFT_TWICE, '2026-11-01T06:10:00Z', '2026-11-01T06:20:00.000Z'],
    ['America/New_York', '0 * * * *', SHIFT_ONCE, '2026-11-01T06:30:00Z', '2026-11-01T07:00:00.000Z'],
    ['Europe/Berlin', '0 30 2 * * *', SHIFT_ONCE, '2026-10-25T01:10:00Z', '2026-10-26T01:30:00.000Z'],
    ['Europe/Berlin', '*/20 2 * * *', SHIFT_ONCE, '2026-10-25T01:10:00Z', '2026-10-26T01:00:00.000Z'],
  ])('%s %s %o at %s (second pass) next runs at %s, re-running no local time', (timeZone, cron, dst, at, expectedNext) => {
    const schedule: Schedule = { cron, timeZone, dst };
    const dayStart = utc(at) - 6 * 3_600_000;
    const now = utc(at);
    const mode = MODES[0] as ScanMode;
    const beforeChange = scanMinuteByMinute(schedule, dayStart, now, mode).created.filter((t) => t < now);
    const recreatedAt = nextOccurrenceAtOrAfter(schedule, now) as number;
    expect(iso(recreatedAt)).toBe(expectedNext);
    const afterChange = scanMinuteByMinute(schedule, now, now + 86_400_000, mode, recreatedAt).created;
    const wallTimes = [...beforeChange, ...afterChange].map((t) => localWallTime(t, timeZone));
    if (dst.repeat === 'once') expect(new Set(wallTimes).size).toBe(wallTimes.length);
    expect(new Set([...beforeChange, ...afterChange]).size).toBe(beforeChange.length + afterChange.length);
  });
});

function localWallTime(instant: number, timeZone: string): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' }).format(instant);
}
