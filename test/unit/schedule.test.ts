import { describe, expect, it } from 'vitest';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { countOccurrences, nextOccurrenceAtOrAfter, occurrencesBetween, validateSchedule } from '../../lib/core/schedule.ts';

const utc = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

describe('occurrence enumeration', () => {
  it('lists a 5-field cron in [from, to), from inclusive, to exclusive', () => {
    const schedule = { cron: '*/15 * * * *', timeZone: 'UTC' };
    const found = occurrencesBetween(schedule, utc('2026-01-01T00:00:00Z'), utc('2026-01-01T01:00:00Z'), 100).map(iso);
    expect(found).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-01T00:15:00.000Z', '2026-01-01T00:30:00.000Z', '2026-01-01T00:45:00.000Z']);
  });

  it('lists a 6-field cron at second precision', () => {
    const schedule = { cron: '*/5 * * * * *', timeZone: 'UTC' };
    const found = occurrencesBetween(schedule, utc('2026-01-01T00:00:03.300Z'), utc('2026-01-01T00:00:21Z'), 100).map(iso);
    expect(found).toEqual(['2026-01-01T00:00:05.000Z', '2026-01-01T00:00:10.000Z', '2026-01-01T00:00:15.000Z', '2026-01-01T00:00:20.000Z']);
  });

  it('stops at the limit and reports the next occurrence separately', () => {
    const schedule = { cron: '* * * * * *', timeZone: 'UTC' };
    const from = utc('2026-01-01T00:00:00Z');
    expect(occurrencesBetween(schedule, from, from + 3_600_000, 7)).toHaveLength(7);
    expect(nextOccurrenceAtOrAfter(schedule, from + 1)).toBe(from + 1000);
    expect(countOccurrences(schedule, from, from + 60_000, 1000)).toBe(60);
  });

  it('returns nothing for an empty or reversed window', () => {
    const schedule = { cron: '* * * * * *', timeZone: 'UTC' };
    expect(occurrencesBetween(schedule, 10_000, 10_000, 10)).toEqual([]);
    expect(occurrencesBetween(schedule, 20_000, 10_000, 10)).toEqual([]);
  });

  it('reads the cron in the job time zone (Asia/Kolkata is UTC+05:30)', () => {
    const schedule = { cron: '0 9 * * *', timeZone: 'Asia/Kolkata' };
    expect(iso(nextOccurrenceAtOrAfter(schedule, utc('2026-06-01T00:00:00Z'))!)).toBe('2026-06-01T03:30:00.000Z');
  });
});

describe('DST in America/New_York', () => {
  const newYork = (cron: string) => ({ cron, timeZone: 'America/New_York' });
  // The local day in UTC: midnight EST is 05:00Z.
  const dayOf = (date: string, offsetHours: number): [number, number] => {
    const start = utc(`${date}T00:00:00Z`) + offsetHours * 3_600_000;
    return [start, start + 23 * 3_600_000 + 1];
  };

  it('a daily 02:30 job runs exactly once on 2026-03-08, when 02:30 does not exist: at 03:30 EDT', () => {
    const [from, to] = dayOf('2026-03-08', 5); // spring-forward day is 23 hours long
    const runs = occurrencesBetween(newYork('30 2 * * *'), from, to, 10);
    expect(runs.map(iso)).toEqual(['2026-03-08T07:30:00.000Z']);
  });

  it('a daily 01:30 job runs exactly once on 2026-11-01, when 01:30 happens twice: at the first, 01:30 EDT', () => {
    const from = utc('2026-11-01T04:00:00Z'); // 00:00 EDT
    const to = utc('2026-11-02T05:00:00Z'); // 00:00 EST the next day (a 25-hour day)
    const runs = occurrencesBetween(newYork('30 1 * * *'), from, to, 10);
    expect(runs.map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
  });

  it('the days around the change keep their local wall time', () => {
    const runs = occurrencesBetween(newYork('30 2 * * *'), utc('2026-03-07T00:00:00Z'), utc('2026-03-10T00:00:00Z'), 10);
    expect(runs.map(iso)).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
  });
});

describe('schedule validation', () => {
  it.each([
    ['61 * * * *', 'schedule'],
    ['not a cron', 'schedule'],
    ['* * * * * * *', 'schedule'],
    ['* * * *', 'schedule'],
  ])('refuses %j naming the schedule field and value', (cron, field) => {
    try {
      validateSchedule({ cron, timeZone: 'UTC' });
      expect.unreachable('should have thrown');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidJobSpecError);
      expect((error as InvalidJobSpecError).field).toBe(field);
      expect((error as InvalidJobSpecError).value).toBe(cron);
      expect((error as Error).message).toContain(JSON.stringify(cron));
    }
  });

  it('refuses an unknown time zone naming timeZone', () => {
    expect(() => validateSchedule({ cron: '* * * * *', timeZone: 'Mars/Olympus' })).toThrowError(/invalid timeZone "Mars\/Olympus"/);
  });
});
