/**
 * Backfill: which past occurrences an operator's `backfill --from --to` asks
 * for, computed in pure code before anything is written (graphile-worker's
 * way). Each becomes the occurrence's own slice, at its own execution key, so
 * running the same backfill again finds every one already there.
 */
import { InvalidOperatorRequestError } from './errors.ts';
import { MAX_PAYLOAD_BYTES } from './job-spec.ts';
import type { StoredJob } from './job-record.ts';
import { occurrencesBetween, scheduleOf } from './schedule.ts';

/** One backfill call writes at most this many slots; a longer range is refused, naming the count. */
export const MAX_BACKFILL_OCCURRENCES = 10_000;
/** The fastest `--rate` a backfill may go (slots written per second). */
export const MAX_BACKFILL_RATE = 100;

/**
 * The occurrences of `job` in [from, to), oldest first.
 * @throws {InvalidOperatorRequestError} naming `from`/`to` when the range is empty, in the future, or too long.
 */
export function planBackfill(job: Pick<StoredJob, 'schedule' | 'timeZone' | 'dst'>, from: number, to: number, now: number): number[] {
  if (to <= from)
    throw new InvalidOperatorRequestError('to', new Date(to).toISOString(), `must be after from (${new Date(from).toISOString()})`);
  if (to > now) {
    throw new InvalidOperatorRequestError(
      'to',
      new Date(to).toISOString(),
      `must not be in the future (now is ${new Date(now).toISOString()}): the scanner runs what is ahead`,
    );
  }
  const occurrences = occurrencesBetween(scheduleOf(job), from, to, MAX_BACKFILL_OCCURRENCES + 1);
  if (occurrences.length > MAX_BACKFILL_OCCURRENCES) {
    throw new InvalidOperatorRequestError(
      'from',
      new Date(from).toISOString(),
      `the range holds more than ${MAX_BACKFILL_OCCURRENCES} occurrences; backfill it in parts`,
    );
  }
  return occurrences;
}

/**
 * `--rate`: `N/s`, `N/m` or a bare N (per second).
 * @throws {InvalidOperatorRequestError} naming `rate`.
 */
export function parseRate(value: string | number): number {
  const match = typeof value === 'number' ? [String(value), String(value), 's'] : /^(\d+(?:\.\d+)?)(?:\/(s|m))?$/.exec(value.trim());
  const perSecond = match ? Number(match[1]) / (match[2] === 'm' ? 60 : 1) : Number.NaN;
  if (!(perSecond > 0) || perSecond > MAX_BACKFILL_RATE) {
    throw new InvalidOperatorRequestError('rate', value, `must be a rate like 5/s or 30/m, above 0 and at most ${MAX_BACKFILL_RATE}/s`);
  }
  return perSecond;
}

/**
 * A triggered slot's own payload: a JSON object of at most MAX_PAYLOAD_BYTES.
 * @throws {InvalidOperatorRequestError} naming `payload`.
 */
export function parseSlotPayload(value: string | Record<string, unknown>): Record<string, unknown> {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (cause) {
      throw new InvalidOperatorRequestError('payload', value, `is not JSON (${(cause as Error).message})`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidOperatorRequestError('payload', value, 'must be a JSON object');
  const bytes = Buffer.byteLength(JSON.stringify(parsed), 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES)
    throw new InvalidOperatorRequestError('payload', `${bytes} bytes`, `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`);
  return parsed as Record<string, unknown>;
}
