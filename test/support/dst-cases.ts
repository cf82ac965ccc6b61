/**
 * The 2026 DST transitions in America/New_York and Europe/Berlin, and what
 * each schedule must run across them, written out by hand (or as plain
 * arithmetic on UTC instants), never computed by the code under test.
 *
 * New York: 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z); 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
 * Berlin:   2026-03-29 02:00 CET -> 03:00 CEST (01:00Z); 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
 */
import type { DstPolicy } from '../../lib/core/schedule.ts';

export interface DstCase {
  readonly name: string;
  readonly cron: string;
  readonly timeZone: string;
  readonly dst: DstPolicy;
  /** The range the job is scanned over (UTC ISO). */
  readonly from: string;
  readonly to: string;
  /** Every occurrence in `[from, to)`, ascending, as ISO strings. */
  readonly expected: readonly string[];
}

export const SHIFT_ONCE: DstPolicy = { gap: 'shift', repeat: 'once' };
export const SKIP_ONCE: DstPolicy = { gap: 'skip', repeat: 'once' };
export const SHIFT_TWICE: DstPolicy = { gap: 'shift', repeat: 'twice' };

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
/** Local day before to local day after each change, in UTC. */
const RANGE = {
  nySpring: { from: '2026-03-07T05:00:00Z', to: '2026-03-10T04:00:00Z' },
  nyFall: { from: '2026-10-31T04:00:00Z', to: '2026-11-03T05:00:00Z' },
  berlinSpring: { from: '2026-03-27T23:00:00Z', to: '2026-03-30T22:00:00Z' },
  berlinFall: { from: '2026-10-23T22:00:00Z', to: '2026-10-26T23:00:00Z' },
} as const;

const z = (isoMinute: string): string => `${isoMinute}:00.000Z`;

/** Every `stepMs` from `from` (inclusive) to `to` (exclusive), except in `[holeFrom, holeTo)`. */
export function every(stepMs: number, from: string, to: string, hole?: { from: string; to: string }): string[] {
  const out: string[] = [];
  for (let at = Date.parse(from); at < Date.parse(to); at += stepMs) {
    if (hole && at >= Date.parse(hole.from) && at < Date.parse(hole.to)) continue;
    out.push(new Date(at).toISOString());
  }
  return out;
}

const HOUR = 3_600_000;

export const DST_CASES: readonly DstCase[] = [
  // A daily time inside the spring-forward gap.
  {
    name: 'NY 30 2 * * * spring, shift',
    cron: '30 2 * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    ...RANGE.nySpring,
    expected: [z('2026-03-07T07:30'), z('2026-03-08T07:30'), z('2026-03-09T06:30')],
  },
  {
    name: 'NY 30 2 * * * spring, skip',
    cron: '30 2 * * *',
    timeZone: NY,
    dst: SKIP_ONCE,
    ...RANGE.nySpring,
    expected: [z('2026-03-07T07:30'), z('2026-03-09T06:30')],
  },
  {
    name: 'NY 30 2 * * * fall (02:30 is not repeated)',
    cron: '30 2 * * *',
    timeZone: NY,
    dst: SHIFT_TWICE,
    ...RANGE.nyFall,
    expected: [z('2026-10-31T06:30'), z('2026-11-01T07:30'), z('2026-11-02T07:30')],
  },
  {
    name: 'Berlin 0 30 2 * * * spring, shift',
    cron: '0 30 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    ...RANGE.berlinSpring,
    expected: [z('2026-03-28T01:30'), z('2026-03-29T01:30'), z('2026-03-30T00:30')],
  },
  {
    name: 'Berlin 0 30 2 * * * spring, skip',
    cron: '0 30 2 * * *',
    timeZone: BERLIN,
    dst: SKIP_ONCE,
    ...RANGE.berlinSpring,
    expected: [z('2026-03-28T01:30'), z('2026-03-30T00:30')],
  },
  {
    name: 'Berlin 0 30 2 * * * fall, once',
    cron: '0 30 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    ...RANGE.berlinFall,
    expected: [z('2026-10-24T00:30'), z('2026-10-25T00:30'), z('2026-10-26T01:30')],
  },
  {
    name: 'Berlin 0 30 2 * * * fall, twice',
    cron: '0 30 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_TWICE,
    ...RANGE.berlinFall,
    expected: [z('2026-10-24T00:30'), z('2026-10-25T00:30'), z('2026-10-25T01:30'), z('2026-10-26T01:30')],
  },
  // Several times inside the gap: each shifted by the hour.
  {
    name: 'NY */20 2 * * * spring, shift',
    cron: '*/20 2 * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    ...RANGE.nySpring,
    expected: [
      '2026-03-07T07:00',
      '2026-03-07T07:20',
      '2026-03-07T07:40',
      '2026-03-08T07:00',
      '2026-03-08T07:20',
      '2026-03-08T07:40',
      '2026-03-09T06:00',
      '2026-03-09T06:20',
      '2026-03-09T06:40',
    ].map(z),
  },
  {
    name: 'NY */20 2 * * * spring, skip',
    cron: '*/20 2 * * *',
    timeZone: NY,
    dst: SKIP_ONCE,
    ...RANGE.nySpring,
    expected: ['2026-03-07T07:00', '2026-03-07T07:20', '2026-03-07T07:40', '2026-03-09T06:00', '2026-03-09T06:20', '2026-03-09T06:40'].map(
      z,
    ),
  },
  {
    name: 'Berlin */20 2 * * * spring, shift',
    cron: '*/20 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    ...RANGE.berlinSpring,
    expected: [
      '2026-03-28T01:00',
      '2026-03-28T01:20',
      '2026-03-28T01:40',
      '2026-03-29T01:00',
      '2026-03-29T01:20',
      '2026-03-29T01:40',
      '2026-03-30T00:00',
      '2026-03-30T00:20',
      '2026-03-30T00:40',
    ].map(z),
  },
  // Several times inside the repeated hour.
  {
    name: 'NY */20 1 * * * fall, once',
    cron: '*/20 1 * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    ...RANGE.nyFall,
    expected: [
      '2026-10-31T05:00',
      '2026-10-31T05:20',
      '2026-10-31T05:40',
      '2026-11-01T05:00',
      '2026-11-01T05:20',
      '2026-11-01T05:40',
      '2026-11-02T06:00',
      '2026-11-02T06:20',
      '2026-11-02T06:40',
    ].map(z),
  },
  {
    name: 'NY */20 1 * * * fall, twice',
    cron: '*/20 1 * * *',
    timeZone: NY,
    dst: SHIFT_TWICE,
    ...RANGE.nyFall,
    expected: [
      '2026-10-31T05:00',
      '2026-10-31T05:20',
      '2026-10-31T05:40',
      '2026-11-01T05:00',
      '2026-11-01T05:20',
      '2026-11-01T05:40',
      '2026-11-01T06:00',
      '2026-11-01T06:20',
      '2026-11-01T06:40',
      '2026-11-02T06:00',
      '2026-11-02T06:20',
      '2026-11-02T06:40',
    ].map(z),
  },
  {
    name: 'Berlin */20 2 * * * fall, once',
    cron: '*/20 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    ...RANGE.berlinFall,
    expected: [
      '2026-10-24T00:00',
      '2026-10-24T00:20',
      '2026-10-24T00:40',
      '2026-10-25T00:00',
      '2026-10-25T00:20',
      '2026-10-25T00:40',
      '2026-10-26T01:00',
      '2026-10-26T01:20',
      '2026-10-26T01:40',
    ].map(z),
  },
  {
    name: 'Berlin */20 2 * * * fall, twice',
    cron: '*/20 2 * * *',
    timeZone: BERLIN,
    dst: SHIFT_TWICE,
    ...RANGE.berlinFall,
    expected: [
      '2026-10-24T00:00',
      '2026-10-24T00:20',
      '2026-10-24T00:40',
      '2026-10-25T00:00',
      '2026-10-25T00:20',
      '2026-10-25T00:40',
      '2026-10-25T01:00',
      '2026-10-25T01:20',
      '2026-10-25T01:40',
      '2026-10-26T01:00',
      '2026-10-26T01:20',
      '2026-10-26T01:40',
    ].map(z),
  },
  // Hourly: the shifted 02:00 is the real 03:00 (one occurrence); with `once` the repeated hour's second pass is quiet.
  {
    name: 'NY 0 * * * * spring, shift',
    cron: '0 * * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    ...RANGE.nySpring,
    expected: every(HOUR, RANGE.nySpring.from, RANGE.nySpring.to),
  },
  {
    name: 'NY 0 * * * * fall, once',
    cron: '0 * * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    ...RANGE.nyFall,
    expected: every(HOUR, RANGE.nyFall.from, RANGE.nyFall.to, { from: '2026-11-01T06:00:00Z', to: '2026-11-01T07:00:00Z' }),
  },
  {
    name: 'NY 0 * * * * fall, twice',
    cron: '0 * * * *',
    timeZone: NY,
    dst: SHIFT_TWICE,
    ...RANGE.nyFall,
    expected: every(HOUR, RANGE.nyFall.from, RANGE.nyFall.to),
  },
  {
    name: 'Berlin 0 * * * * spring, skip',
    cron: '0 * * * *',
    timeZone: BERLIN,
    dst: SKIP_ONCE,
    ...RANGE.berlinSpring,
    expected: every(HOUR, RANGE.berlinSpring.from, RANGE.berlinSpring.to),
  },
  {
    name: 'Berlin 0 * * * * fall, once',
    cron: '0 * * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    ...RANGE.berlinFall,
    expected: every(HOUR, RANGE.berlinFall.from, RANGE.berlinFall.to, { from: '2026-10-25T01:00:00Z', to: '2026-10-25T02:00:00Z' }),
  },
  // Per-second, over a short range around each change.
  {
    name: 'NY */15 * * * * * spring, shift',
    cron: '*/15 * * * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    from: '2026-03-08T06:55:00Z',
    to: '2026-03-08T07:05:00Z',
    expected: every(15_000, '2026-03-08T06:55:00Z', '2026-03-08T07:05:00Z'),
  },
  {
    name: 'NY */15 * * * * * spring, skip',
    cron: '*/15 * * * * *',
    timeZone: NY,
    dst: SKIP_ONCE,
    from: '2026-03-08T06:55:00Z',
    to: '2026-03-08T07:05:00Z',
    expected: every(15_000, '2026-03-08T06:55:00Z', '2026-03-08T07:05:00Z'),
  },
  {
    name: 'NY */15 * * * * * fall, once',
    cron: '*/15 * * * * *',
    timeZone: NY,
    dst: SHIFT_ONCE,
    from: '2026-11-01T05:57:00Z',
    to: '2026-11-01T07:03:00Z',
    expected: every(15_000, '2026-11-01T05:57:00Z', '2026-11-01T07:03:00Z', { from: '2026-11-01T06:00:00Z', to: '2026-11-01T07:00:00Z' }),
  },
  {
    name: 'NY */15 * * * * * fall, twice',
    cron: '*/15 * * * * *',
    timeZone: NY,
    dst: SHIFT_TWICE,
    from: '2026-11-01T05:57:00Z',
    to: '2026-11-01T07:03:00Z',
    expected: every(15_000, '2026-11-01T05:57:00Z', '2026-11-01T07:03:00Z'),
  },
  {
    name: 'Berlin */15 * * * * * spring, shift',
    cron: '*/15 * * * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    from: '2026-03-29T00:55:00Z',
    to: '2026-03-29T01:05:00Z',
    expected: every(15_000, '2026-03-29T00:55:00Z', '2026-03-29T01:05:00Z'),
  },
  {
    name: 'Berlin */15 * * * * * fall, once',
    cron: '*/15 * * * * *',
    timeZone: BERLIN,
    dst: SHIFT_ONCE,
    from: '2026-10-25T00:57:00Z',
    to: '2026-10-25T02:03:00Z',
    expected: every(15_000, '2026-10-25T00:57:00Z', '2026-10-25T02:03:00Z', { from: '2026-10-25T01:00:00Z', to: '2026-10-25T02:00:00Z' }),
  },
];

/** The cases a scanner without a DST policy must also get right: the documented default (shift, once). */
export const DEFAULT_POLICY_CASES = DST_CASES.filter((c) => c.dst === SHIFT_ONCE);
