/**
 * Scheduling math: which instants a cron schedule fires at, in its time zone.
 * Pure; parsing is cron-parser's, never ours.
 *
 * DST, as cron-parser resolves it and as cronfence documents it:
 * - A local time that does not exist (spring forward, 02:30 on 2026-03-08 in
 *   America/New_York) fires once, at the same wall time shifted forward by the
 *   gap (03:30 EDT).
 * - A local time that occurs twice (fall back, 01:30 on 2026-11-01) fires once,
 *   at its first occurrence (01:30 EDT).
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { InvalidJobSpecError } from './errors.ts';

export interface Schedule {
  /** Cron: 5 fields (minute precision) or 6 with a leading seconds field. */
  readonly cron: string;
  /** IANA time zone the cron fields are read in. */
  readonly timeZone: string;
}

/** Throws {@link InvalidJobSpecError} naming `timeZone` when it is not an IANA zone. */
export function assertTimeZone(timeZone: string, field = 'timeZone'): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch (cause) {
    throw new InvalidJobSpecError(field, timeZone, 'not an IANA time zone (e.g. "UTC", "Asia/Kolkata")', {
      cause,
    });
  }
}

/**
 * Validates a schedule without enumerating it.
 * @throws {InvalidJobSpecError} naming `schedule` or `timeZone`.
 */
export function validateSchedule(schedule: Schedule, field = 'schedule'): void {
  assertTimeZone(schedule.timeZone);
  const fields = schedule.cron.trim().split(/\s+/);
  const isAlias = schedule.cron.trim().startsWith('@');
  if (!isAlias && (fields.length < 5 || fields.length > 6)) {
    throw new InvalidJobSpecError(
      field,
      schedule.cron,
      `cron needs 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first; got ${fields.length}`,
    );
  }
  const expression = parse(schedule, 0, field);
  // cron-parser accepts some impossible dates (e.g. 30 February) and only fails when iterating.
  try {
    expression.next();
  } catch (cause) {
    throw new InvalidJobSpecError(field, schedule.cron, 'never fires', { cause });
  }
}

/**
 * Occurrences in `[fromMs, toMs)`, ascending, at most `limit` of them.
 * @throws {InvalidJobSpecError} when the schedule does not parse.
 */
export function occurrencesBetween(schedule: Schedule, fromMs: number, toMs: number, limit: number): number[] {
  const out: number[] = [];
  if (toMs <= fromMs || limit <= 0) return out;
  // currentDate is exclusive; start one millisecond early so `fromMs` itself counts.
  const expression = parse(schedule, fromMs - 1);
  while (out.length < limit) {
    const next = nextOf(expression);
    if (next === undefined || next >= toMs) break;
    out.push(next);
  }
  return out;
}

/** The first occurrence at or after `fromMs`, or undefined if the schedule never fires again. */
export function nextOccurrenceAtOrAfter(schedule: Schedule, fromMs: number): number | undefined {
  return nextOf(parse(schedule, fromMs - 1));
}

/** How many occurrences fall in `[fromMs, toMs)`, counting at most `cap`. */
export function countOccurrences(schedule: Schedule, fromMs: number, toMs: number, cap: number): number {
  return occurrencesBetween(schedule, fromMs, toMs, cap).length;
}

function parse(schedule: Schedule, currentDateMs: number, field = 'schedule'): CronExpression {
  try {
    return CronExpressionParser.parse(schedule.cron, {
      currentDate: new Date(currentDateMs),
      tz: schedule.timeZone,
      strict: false,
    });
  } catch (cause) {
    throw new InvalidJobSpecError(field, schedule.cron, (cause as Error).message, { cause });
  }
}

function nextOf(expression: CronExpression): number | undefined {
  if (!expression.hasNext()) return undefined;
  return expression.next().getTime();
}
