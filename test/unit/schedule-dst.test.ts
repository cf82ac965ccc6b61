import { describe, expect, it } from 'vitest';
import { nextOccurrenceAtOrAfter, occurrencesBetween, type Schedule } from '../../lib/core/schedule.ts';
import { DST_CASES, SHIFT_ONCE, SHIFT_TWICE, SKIP_ONCE } from '../support/dst-cases.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const utc = (text: string): number => Date.parse(text);

describe('occurrences do not depend on where a query starts', () => {
  it.each(DST_CASES)('$name: from any start, [from, to) is the fixed set cut to the range', (dstCase) => {
    const schedule: Schedule = { cron: dstCase.cron, timeZone: dstCase.timeZone, dst: dstCase.dst };
    const to = utc(dstCase.to);
    const expected = dstCase.expected.map(utc);
    // Every 41 minutes (61 s for a per-second cron), and a millisecond either side of some 12 occurrences (all, if that few).
    const starts: number[] = [];
    for (let at = utc(dstCase.from); at < to; at += dstCase.cron === '*/15 * * * * *' ? 61_000 : 41 * 60_000) starts.push(at);
    const every = Math.ceil(expected.length / 12);
    expected.forEach((at, index) => {
      if (index % every === 0) starts.push(at - 1, at, at + 1);
    });
    for (const start of starts) {
      const want = expected.filter((at) => at >= start);
      expect(occurrencesBetween(schedule, start, to, 10_000).map(iso), `from ${iso(start)}`).toEqual(want.map(iso));
      if (want[0] !== undefined)
        expect(iso(nextOccurrenceAtOrAfter(schedule, start) as number), `next from ${iso(start)}`).toBe(iso(want[0]));
    }
  });
});

describe('DST policy', () => {
  const newYork = (cron: string, dst = SHIFT_ONCE): Schedule => ({ cron, timeZone: 'America/New_York', dst });

  it('shift: 02:30 on 2026-03-08 runs at 03:30 EDT, even asked from one millisecond before it', () => {
    const at = utc('2026-03-08T07:30:00Z');
    expect(occurrencesBetween(newYork('30 2 * * *'), at - 1, at + 1, 10).map(iso)).toEqual(['2026-03-08T07:30:00.000Z']);
  });

  it('shift: a shifted 02:30 and a real 03:30 are one occurrence', () => {
    const found = occurrencesBetween(newYork('30 2,3 * * *'), utc('2026-03-08T05:00:00Z'), utc('2026-03-09T05:00:00Z'), 10);
    expect(found.map(iso)).toEqual(['2026-03-08T07:30:00.000Z']);
  });

  it('skip: 02:30 on 2026-03-08 does not run; the next is 2026-03-09 02:30 EDT', () => {
    expect(iso(nextOccurrenceAtOrAfter(newYork('30 2 * * *', SKIP_ONCE), utc('2026-03-08T05:00:00Z')) as number)).toBe(
      '2026-03-09T06:30:00.000Z',
    );
  });

  it('once and twice: 01:30 on 2026-11-01 runs at 01:30 EDT, and with twice also at 01:30 EST', () => {
    const from = utc('2026-11-01T04:00:00Z');
    const to = utc('2026-11-02T05:00:00Z');
    expect(occurrencesBetween(newYork('30 1 * * *'), from, to, 10).map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(occurrencesBetween(newYork('30 1 * * *', SHIFT_TWICE), from, to, 10).map(iso)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T06:30:00.000Z',
    ]);
  });

  it('once: asked from inside the second pass, a time already run in the first pass is not returned', () => {
    expect(iso(nextOccurrenceAtOrAfter(newYork('*/20 1 * * *'), utc('2026-11-01T06:10:00Z')) as number)).toBe('2026-11-02T06:00:00.000Z');
  });

  it('a schedule without a policy gets the default (shift, once)', () => {
    const schedule: Schedule = { cron: '30 2 * * *', timeZone: 'America/New_York' };
    expect(iso(nextOccurrenceAtOrAfter(schedule, utc('2026-03-08T07:29:59.999Z')) as number)).toBe('2026-03-08T07:30:00.000Z');
  });

  it('aliases keep working across a change: @daily in Europe/Berlin is local midnight', () => {
    const found = occurrencesBetween(
      { cron: '@daily', timeZone: 'Europe/Berlin' },
      utc('2026-03-28T12:00:00Z'),
      utc('2026-03-30T12:00:00Z'),
      10,
    );
    expect(found.map(iso)).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
  });

  it('a schedule whose every occurrence is in a gap never fires with skip (02:30 on the second Sunday of March)', () => {
    expect(nextOccurrenceAtOrAfter(newYork('30 2 * 3 0#2', SKIP_ONCE), utc('2026-01-01T00:00:00Z'))).toBeUndefined();
    expect(iso(nextOccurrenceAtOrAfter(newYork('30 2 * 3 0#2'), utc('2026-01-01T00:00:00Z')) as number)).toBe('2026-03-08T07:30:00.000Z');
  });

  it('finds a rare occurrence far ahead (29 February, 02:30 New York time)', () => {
    expect(iso(nextOccurrenceAtOrAfter(newYork('30 2 29 2 *'), utc('2026-03-01T00:00:00Z')) as number)).toBe('2028-02-29T07:30:00.000Z');
  });
});
