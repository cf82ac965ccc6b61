/**
 * The three kinds of schedule expression a job may have, told apart and
 * parsed here (pure; cron itself is parsed by cron-parser in schedule.ts):
 * - cron: 5 fields, or 6 with seconds first (`0 30 9 * * 1-5`);
 * - `rate(N unit)`: every N seconds, minutes, hours or days (`rate(5 minutes)`,
 *   `rate(30 seconds)`). Anchored to the Unix epoch, so its occurrences are the
 *   multiples of the interval since 1970-01-01T00:00:00Z: `rate(5 minutes)`
 *   fires at :00, :05, :10 of every hour, whenever the job was created, and
 *   the job's time zone does not move them. (An epoch anchor keeps the set of
 *   occurrences a function of the expression alone, as a cron's is, so a scan
 *   that resumes from any `nextFireAt` neither loses nor repeats one.)
 * - `at(YYYY-MM-DDTHH:MM:SS)`: once, at that local wall time in the job's time
 *   zone (a wall time DST skips is shifted or skipped by the job's `dst.gap`;
 *   one DST repeats runs at its first occurrence only: a one-time job runs once).
 */
import { InvalidJobSpecError } from './errors.ts';

export type ScheduleExpression =
  | { readonly kind: 'cron'; readonly cron: string }
  | { readonly kind: 'rate'; readonly everyMs: number }
  /** `wallMs`: the local wall time read as if it were UTC (wall-time.ts). */
  | { readonly kind: 'at'; readonly wallMs: number };

export type ScheduleKind = ScheduleExpression['kind'];

const UNIT_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const RATE = /^rate\(\s*(\d+)\s+([a-z]+?)s?\s*\)$/i;
const AT = /^at\(\s*(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\s*\)$/;
/** A rate longer than this is better written as a cron (a whole year of `rate(N days)` is 365 days). */
export const MAX_RATE_MS = 366 * 86_400_000;

/**
 * Which kind `text` is, parsed. A cron is returned as written (schedule.ts
 * validates its fields).
 * @throws {InvalidJobSpecError} naming `field` and the value when a `rate(...)` or `at(...)` is malformed.
 */
export function parseScheduleExpression(text: string, field = 'schedule'): ScheduleExpression {
  const trimmed = text.trim();
  if (/^rate\s*\(/i.test(trimmed)) return { kind: 'rate', everyMs: parseRate(trimmed, text, field) };
  if (/^at\s*\(/i.test(trimmed)) return { kind: 'at', wallMs: parseAt(trimmed, text, field) };
  return { kind: 'cron', cron: text };
}

/** The kind of `text`, without throwing (a malformed rate or at is still that kind). */
export function scheduleKindOf(text: string): ScheduleKind {
  const trimmed = text.trim();
  if (/^rate\s*\(/i.test(trimmed)) return 'rate';
  if (/^at\s*\(/i.test(trimmed)) return 'at';
  return 'cron';
}

function parseRate(trimmed: string, text: string, field: string): number {
  const match = RATE.exec(trimmed);
  if (!match)
    throw new InvalidJobSpecError(
      field,
      text,
      'a rate is written rate(N unit), unit one of second, minute, hour, day (e.g. "rate(5 minutes)")',
    );
  const count = Number(match[1]);
  const unitMs = UNIT_MS[(match[2] as string).toLowerCase()];
  if (unitMs === undefined) {
    throw new InvalidJobSpecError(field, text, `unknown unit ${JSON.stringify(match[2])}; use second(s), minute(s), hour(s) or day(s)`);
  }
  if (count < 1) throw new InvalidJobSpecError(field, text, 'the interval must be at least 1');
  const everyMs = count * unitMs;
  if (everyMs > MAX_RATE_MS)
    throw new InvalidJobSpecError(field, text, 'the interval must be at most 366 days (use a cron for rarer schedules)');
  return everyMs;
}

function parseAt(trimmed: string, text: string, field: string): number {
  const match = AT.exec(trimmed);
  if (!match)
    throw new InvalidJobSpecError(
      field,
      text,
      'a one-time schedule is written at(YYYY-MM-DDTHH:MM:SS), a local time in the job\'s time zone (e.g. "at(2026-12-24T18:00:00)")',
    );
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const wallMs = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(wallMs);
  const exists =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  if (!exists) throw new InvalidJobSpecError(field, text, 'no such date or time');
  return wallMs;
}
