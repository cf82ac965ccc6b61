import { describe, expect, it } from 'vitest';
import { instantsOfWallTime, wallTimeIntervals } from '../../lib/core/wall-time.ts';
import { offsetSpans, utcOffsetAt } from '../../lib/core/zone-offsets.ts';
import { SHIFT_ONCE, SHIFT_TWICE, SKIP_ONCE } from '../support/dst-cases.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const utc = (text: string): number => Date.parse(text);

describe('wall time <-> instants', () => {
  const spans = offsetSpans('America/New_York', utc('2026-03-06T00:00:00Z'), utc('2026-03-11T00:00:00Z'));

  it('reads the spring-forward transition to the second', () => {
    expect(spans.map((span) => [span.offsetMs / 3_600_000, span.endMs === Infinity ? 'end' : iso(span.endMs)])).toEqual([
      [-5, '2026-03-08T07:00:00.000Z'],
      [-4, 'end'],
    ]);
  });

  it('maps a gap wall time by the policy, and a plain one to its instant', () => {
    const wall = Date.UTC(2026, 2, 8, 2, 30);
    expect(instantsOfWallTime(wall, spans, SHIFT_ONCE).map(iso)).toEqual(['2026-03-08T07:30:00.000Z']);
    expect(instantsOfWallTime(wall, spans, SKIP_ONCE)).toEqual([]);
    expect(instantsOfWallTime(Date.UTC(2026, 2, 9, 2, 30), spans, SHIFT_ONCE).map(iso)).toEqual(['2026-03-09T06:30:00.000Z']);
  });

  it('enumerates only the wall times of the range: exactly [from + offset, to + offset) away from a change', () => {
    const from = utc('2026-03-10T12:00:00Z');
    expect(wallTimeIntervals(spans, from, from + 120_000, SHIFT_ONCE)).toEqual([
      { start: from - 4 * 3_600_000, end: from + 120_000 - 4 * 3_600_000 },
    ]);
  });

  it('across the gap: the minute before it, the shifted first minute of the gap (with shift), the first real minute after', () => {
    const from = utc('2026-03-08T06:59:00Z'); // 01:59 EST
    const wall = (hour: number, minute: number) => Date.UTC(2026, 2, 8, hour, minute);
    expect(wallTimeIntervals(spans, from, from + 120_000, SHIFT_ONCE)).toEqual([
      { start: wall(1, 59), end: wall(2, 1) },
      { start: wall(3, 0), end: wall(3, 1) },
    ]);
    expect(wallTimeIntervals(spans, from, from + 120_000, SKIP_ONCE)).toEqual([
      { start: wall(1, 59), end: wall(2, 0) },
      { start: wall(3, 0), end: wall(3, 1) },
    ]);
  });

  it('in the second pass of a repeated hour: nothing to enumerate with once, its own wall times with twice', () => {
    const fall = offsetSpans('America/New_York', utc('2026-10-30T00:00:00Z'), utc('2026-11-03T00:00:00Z'));
    const from = utc('2026-11-01T06:30:00Z'); // 01:30 EST
    expect(wallTimeIntervals(fall, from, from + 120_000, SHIFT_ONCE)).toEqual([]);
    expect(wallTimeIntervals(fall, from, from + 120_000, SHIFT_TWICE)).toEqual([
      { start: Date.UTC(2026, 10, 1, 1, 30), end: Date.UTC(2026, 10, 1, 1, 32) },
    ]);
  });
});

describe('zone offsets', () => {
  it('reads offsets from the tz database, to the second where a zone had one', () => {
    expect(utcOffsetAt('America/New_York', utc('2026-01-15T12:00:00Z'))).toBe(-5 * 3_600_000);
    expect(utcOffsetAt('Asia/Kolkata', utc('2026-01-15T12:00:00Z'))).toBe(5.5 * 3_600_000);
    expect(utcOffsetAt('UTC', utc('2026-01-15T12:00:00Z'))).toBe(0);
  });

  it('finds both Berlin changes of 2026 in one range', () => {
    const spans = offsetSpans('Europe/Berlin', utc('2026-01-01T00:00:00Z'), utc('2027-01-01T00:00:00Z'));
    expect(spans.slice(0, -1).map((span) => iso(span.endMs))).toEqual(['2026-03-29T01:00:00.000Z', '2026-10-25T01:00:00.000Z']);
    expect(spans.map((span) => span.offsetMs / 3_600_000)).toEqual([1, 2, 1]);
  });

  it('maps a repeated wall time to its first instant (once) or both (twice)', () => {
    const spans = offsetSpans('America/New_York', utc('2026-10-30T00:00:00Z'), utc('2026-11-03T00:00:00Z'));
    const wall = Date.UTC(2026, 10, 1, 1, 30);
    expect(instantsOfWallTime(wall, spans, SHIFT_ONCE).map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(instantsOfWallTime(wall, spans, SHIFT_TWICE).map(iso)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z']);
  });
});
