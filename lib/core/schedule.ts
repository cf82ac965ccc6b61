/**
 * Scheduling math: which instants a schedule fires at, in its time zone.
 * Pure; cron parsing is cron-parser's, never ours; `rate(...)` and `at(...)`
 * are small enough to be ours (schedule-kinds.ts), and are dispatched first.
 *
 * Start-independent by construction: the occurrences are a fixed set, a
 * function of (cron, time zone, DST policy) alone, and every query returns
 * that set intersected with its range, whatever the range's start. The
 * scanner resumes from a stored `nextFireAt` on every scan, so anything else
 * loses or repeats occurrences at a DST change. (cron-parser's own `tz` mode
 * is not: from 03:29:59 EDT on 2026-03-08 it skips that day's shifted 02:30,
 * and from the second pass of 01:xx on 2026-11-01 it returns 01:xx again.)
 *
 * How: cron-parser enumerates LOCAL WALL-CLOCK times, parsing the cron in
 * UTC and reading its instants as naive wall times (wall-time.ts), which has
 * no DST and so no dependence on where it starts; each wall time is then
 * mapped to instants in the job's zone under its {@link DstPolicy}:
 * - gap (spring forward, 02:30 on 2026-03-08 in America/New_York): `shift`
 *   runs it at 03:30 EDT (07:30Z), `skip` drops it;
 * - repeat (fall back, 01:30 on 2026-11-01): `once` runs its first occurrence
 *   (01:30 EDT, 05:30Z), `twice` runs both (and 01:30 EST, 06:30Z).
 * Instants that coincide (a shifted 02:30 and a real 03:30) are one occurrence.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { InvalidJobSpecError } from './errors.ts';
import { parseScheduleExpression } from './schedule-kinds.ts';
import { DEFAULT_DST_POLICY, instantsOfWallTime, wallTimeCeiling, wallTimeIntervals, type DstPolicy } from './wall-time.ts';
import { offsetSpans } from './zone-offsets.ts';

export { DEFAULT_DST_POLICY, type DstPolicy } from './wall-time.ts';

export interface Schedule {
  /**
   * The job's schedule expression: a cron of 5 fields (minute precision) or 6
   * with a leading seconds field, `rate(N unit)` or `at(local time)` (schedule-kinds.ts).
   */
  readonly cron: string;
  /** IANA time zone the cron fields are read in. */
  readonly timeZone: string;
  /** What a local time skipped or repeated by DST does. @default {@link DEFAULT_DST_POLICY} (shift, once) */
  readonly dst?: DstPolicy;
}

/** The schedule of a job (spec or stored job): the one way call sites build a {@link Schedule}. */
export function scheduleOf(job: { readonly schedule: string; readonly timeZone: string; readonly dst?: DstPolicy }): Schedule {
  return { cron: job.schedule, timeZone: job.timeZone, dst: job.dst ?? DEFAULT_DST_POLICY };
}

/** Larger than any UTC offset a zone has had (-12 h to +14 h; old local mean times up to ~16 h). */
const MAX_OFFSET_MS = 18 * 3_600_000;
/** Offset spans are read this far beyond a range, so every wall time's candidate instants are covered. */
const SPAN_MARGIN_MS = 2 * MAX_OFFSET_MS;
/** Long ranges are walked in chunks that double up to this, so offsets are only read where enumeration got. */
const MAX_CHUNK_MS = 32 * 86_400_000;
const FIRST_CHUNK_MS = 2 * 86_400_000;
/** How far ahead the next occurrence is looked for; a cron's rarest repeat (29 February on a Monday) is 28 years. */
export const NEXT_OCCURRENCE_HORIZON_MS = 100 * 365.25 * 86_400_000;
/** Dates beyond this are out of JavaScript's range (8.64e15) with room for the margins. */
const MAX_INSTANT_MS = 8.64e15 - 4 * 86_400_000;

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
  const kind = parseScheduleExpression(schedule.cron, field);
  if (kind.kind === 'rate') return;
  if (kind.kind === 'at') {
    if (atInstant(schedule, kind.wallMs) === undefined) {
      throw new InvalidJobSpecError(
        field,
        schedule.cron,
        `never fires: that local time does not exist in ${schedule.timeZone} (a DST gap) and dst.gap is "skip"`,
      );
    }
    return;
  }
  const fields = schedule.cron.trim().split(/\s+/);
  const isAlias = schedule.cron.trim().startsWith('@');
  if (!isAlias && (fields.length < 5 || fields.length > 6)) {
    throw new InvalidJobSpecError(
      field,
      schedule.cron,
      `cron needs 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first; got ${fields.length}`,
    );
  }
  const expression = parseWallClock(schedule.cron, 0, field);
  // cron-parser accepts some impossible dates (e.g. 30 February) and only fails when iterating.
  try {
    expression.next();
  } catch (cause) {
    throw new InvalidJobSpecError(field, schedule.cron, 'never fires', { cause });
  }
}

/**
 * Occurrences in `[fromMs, toMs)`, ascending, at most `limit` of them:
 * the schedule's fixed set of occurrences intersected with the range.
 * @throws {InvalidJobSpecError} when the schedule does not parse.
 */
export function occurrencesBetween(schedule: Schedule, fromMs: number, toMs: number, limit: number): number[] {
  const expression = parseScheduleExpression(schedule.cron);
  if (expression.kind === 'rate') return rateOccurrences(expression.everyMs, fromMs, Math.min(toMs, MAX_INSTANT_MS), limit);
  if (expression.kind === 'at') {
    const at = atInstant(schedule, expression.wallMs);
    return at !== undefined && at >= fromMs && at < toMs && limit > 0 ? [at] : [];
  }
  const out: number[] = [];
  const endMs = Math.min(toMs, MAX_INSTANT_MS);
  let chunkMs = FIRST_CHUNK_MS;
  // Chunks are exact because the set does not depend on where a query starts.
  for (let startMs = fromMs; startMs < endMs && out.length < limit;) {
    const chunkEndMs = Math.min(endMs, startMs + chunkMs);
    const found = occurrencesInChunk(schedule, startMs, chunkEndMs, limit - out.length);
    for (const instant of found) out.push(instant);
    startMs = chunkEndMs;
    chunkMs = Math.min(chunkMs * 2, MAX_CHUNK_MS);
    if (found.length > 0) continue;
    // Jump over a quiet stretch (a yearly cron) to just before the next wall time can fire, and look there closely.
    const nextWall = firstWallTimeAtOrAfter(schedule.cron, startMs - MAX_OFFSET_MS);
    if (nextWall === undefined) break;
    if (nextWall - MAX_OFFSET_MS > startMs) {
      startMs = nextWall - MAX_OFFSET_MS;
      chunkMs = FIRST_CHUNK_MS;
    }
  }
  return out;
}

/**
 * The first occurrence at or after `fromMs`, or undefined if the schedule
 * never fires again (within {@link NEXT_OCCURRENCE_HORIZON_MS}: `30 2 * 3 0#2`
 * in America/New_York with `gap: 'skip'` is always in the gap).
 */
export function nextOccurrenceAtOrAfter(schedule: Schedule, fromMs: number): number | undefined {
  return occurrencesBetween(schedule, fromMs, fromMs + NEXT_OCCURRENCE_HORIZON_MS, 1)[0];
}

/** How many occurrences fall in `[fromMs, toMs)`, counting at most `cap`. */
export function countOccurrences(schedule: Schedule, fromMs: number, toMs: number, cap: number): number {
  return occurrencesBetween(schedule, fromMs, toMs, cap).length;
}

/** Multiples of `everyMs` since the epoch in `[fromMs, toMs)` (schedule-kinds.ts: the epoch anchor). */
function rateOccurrences(everyMs: number, fromMs: number, toMs: number, limit: number): number[] {
  const out: number[] = [];
  for (let at = Math.ceil(fromMs / everyMs) * everyMs; at < toMs && out.length < limit; at += everyMs) out.push(at);
  return out;
}

/** The one instant of an `at(...)` wall time in the job's zone: the first, if DST repeats it; none if skipped in a gap. */
function atInstant(schedule: Schedule, wallMs: number): number | undefined {
  const spans = offsetSpans(schedule.timeZone, wallMs - SPAN_MARGIN_MS, wallMs + SPAN_MARGIN_MS);
  const policy = schedule.dst ?? DEFAULT_DST_POLICY;
  return instantsOfWallTime(wallMs, spans, { gap: policy.gap, repeat: 'once' })[0];
}

/**
 * One bounded range. Wall times are enumerated only where an occurrence in
 * range can come from (wall-time.ts), so a per-second cron enumerates about
 * as many wall times as it has occurrences, on a DST day too.
 */
function occurrencesInChunk(schedule: Schedule, fromMs: number, toMs: number, limit: number): number[] {
  const spans = offsetSpans(schedule.timeZone, fromMs - SPAN_MARGIN_MS, toMs + SPAN_MARGIN_MS);
  const policy = schedule.dst ?? DEFAULT_DST_POLICY;
  const out: number[] = [];
  for (const interval of wallTimeIntervals(spans, fromMs, toMs, policy)) {
    const expression = parseWallClock(schedule.cron, interval.start - 1);
    for (;;) {
      const wall = nextOf(expression);
      if (wall === undefined || wall >= interval.end) break;
      // Past a fall-back, later wall times can still map to earlier instants: stop once none can beat the limit-th.
      if (out.length >= limit && wall >= wallTimeCeiling(spans, fromMs, out[limit - 1] as number)) return out.slice(0, limit);
      for (const instant of instantsOfWallTime(wall, spans, policy)) {
        if (instant >= fromMs && instant < toMs) insertSortedUnique(out, instant);
      }
    }
  }
  return out.slice(0, limit);
}

function firstWallTimeAtOrAfter(cron: string, wallMs: number): number | undefined {
  return nextOf(parseWallClock(cron, wallMs - 1));
}

/** Parses `cron` in UTC, so its instants read as naive local wall times; `currentDate` is exclusive. */
function parseWallClock(cron: string, currentDateMs: number, field = 'schedule'): CronExpression {
  try {
    return CronExpressionParser.parse(cron, { currentDate: new Date(currentDateMs), tz: 'UTC', strict: false });
  } catch (cause) {
    throw new InvalidJobSpecError(field, cron, (cause as Error).message, { cause });
  }
}

/** The next wall time, or undefined when cron-parser finds none (it throws at its loop limit). */
function nextOf(expression: CronExpression): number | undefined {
  try {
    return expression.next().getTime();
  } catch {
    return undefined;
  }
}

/** Instants arrive almost in order (only a fall-back reorders them), so insert from the end. */
function insertSortedUnique(sorted: number[], value: number): void {
  let index = sorted.length;
  while (index > 0 && (sorted[index - 1] as number) > value) index--;
  if (index > 0 && sorted[index - 1] === value) return;
  sorted.splice(index, 0, value);
}
