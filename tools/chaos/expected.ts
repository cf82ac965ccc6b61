/**
 * The drill's expected occurrences, following each job's recorded history:
 * an occurrence is expected only while the definition that has it is live,
 * from the change that made it live (inclusive: the new definition's first
 * occurrence is the first at or after the change) to the next change
 * (exclusive), and only while that definition is enabled.
 *
 * Two ways to enumerate a schedule:
 * - `cronParserOccurrences`, straight from cron-parser and not through
 *   lib/core/schedule.ts, so a bug in our own enumeration cannot hide a
 *   missed slice (the default); `rate(...)` and `at(...)` schedules by their
 *   own arithmetic here (multiples of the interval since the epoch; the local
 *   time read back through Intl), likewise apart from the engine's;
 * - `scheduleMathOccurrences`, lib/core/schedule.ts itself: the DST mode's,
 *   since what a local time that does not exist or occurs twice means is that
 *   module's documented policy, not cron-parser's.
 */
import { CronExpressionParser } from 'cron-parser';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { SkipReason } from '../../lib/core/job-record.ts';
import { occurrencesBetween, scheduleOf } from '../../lib/core/schedule.ts';
import { skipReasonOf, type JobDefinition, type JobHistory } from './job-history.ts';

export interface ExpectedOccurrence {
  readonly executionKey: string;
  readonly jobId: string;
  readonly scheduledAt: number;
  readonly generation: number;
  /**
   * When the next change replaced the definition that has this occurrence
   * (undefined: still live at the end). A slice still pending then may end
   * SKIPPED by that change (or a later one), with `skipReason`.
   */
  readonly supersededAt?: number;
  readonly skipReason?: SkipReason;
}

/** Occurrences of `definition` in `[fromMs, toMs)`, ascending. */
export type Enumerate = (definition: JobDefinition, fromMs: number, toMs: number) => number[];

/** More occurrences than a drill's window holds for any schedule; a guard against a runaway loop. */
const MAX_PER_INTERVAL = 100_000;

export const cronParserOccurrences: Enumerate = (definition, fromMs, toMs) => {
  const rate = /^rate\((\d+) (second|minute|hour|day)s?\)$/.exec(definition.schedule);
  if (rate) return rateOccurrences(Number(rate[1]) * (UNIT_MS[rate[2] as string] as number), fromMs, toMs);
  const at = /^at\((.+)\)$/.exec(definition.schedule);
  if (at) return [zonedInstant(at[1] as string, definition.timeZone)].filter((instant) => instant >= fromMs && instant < toMs);
  const out: number[] = [];
  const expression = CronExpressionParser.parse(definition.schedule, { currentDate: new Date(fromMs - 1), tz: definition.timeZone });
  while (out.length < MAX_PER_INTERVAL) {
    const at = expression.next().getTime();
    if (at >= toMs) break;
    out.push(at);
  }
  return out;
};

const UNIT_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

function rateOccurrences(everyMs: number, fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let at = Math.ceil(fromMs / everyMs) * everyMs; at < toMs && out.length < MAX_PER_INTERVAL; at += everyMs) out.push(at);
  return out;
}

/**
 * The instant a local time (YYYY-MM-DDTHH:MM:SS) names in `timeZone`, by
 * reading the zone's offset back through Intl twice (enough away from a DST
 * change, which is where the drill puts its one-time jobs).
 */
export function zonedInstant(local: string, timeZone: string): number {
  const wall = Date.parse(`${local}Z`);
  const offsetAt = (instant: number): number => wallOf(instant, timeZone) - instant;
  const guess = wall - offsetAt(wall);
  return wall - offsetAt(guess);
}

/** The local wall time of `instant` in `timeZone`, read as if it were UTC. */
export function wallOf(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const part = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
}

/**
 * The engine's own schedule math. (When lib/core/schedule.ts gains the
 * per-job DST policy, this is where the job's full schedule goes in.)
 */
export const scheduleMathOccurrences: Enumerate = (definition, fromMs, toMs) =>
  occurrencesBetween(scheduleOf(definition), fromMs, toMs, MAX_PER_INTERVAL);

export function expectedOccurrences(
  histories: readonly JobHistory[],
  fromMs: number,
  toMs: number,
  enumerate: Enumerate = cronParserOccurrences,
): ExpectedOccurrence[] {
  const expected: ExpectedOccurrence[] = [];
  for (const { jobId, changes } of histories) {
    changes.forEach((change, index) => {
      const next = changes[index + 1];
      if (!change.definition?.enabled) return;
      const from = Math.max(fromMs, change.at);
      const to = Math.min(toMs, next?.at ?? Number.POSITIVE_INFINITY);
      if (to <= from) return;
      for (const scheduledAt of enumerate(change.definition, from, to)) {
        expected.push({
          executionKey: executionKey(jobId, scheduledAt),
          jobId,
          scheduledAt,
          generation: change.generation,
          supersededAt: next?.at,
          skipReason: next ? skipReasonOf(next.kind) : undefined,
        });
      }
    });
  }
  return expected;
}
