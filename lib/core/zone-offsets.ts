/**
 * A time zone's UTC offset over a range of instants, as spans of constant
 * offset, read from the platform's tz database through Intl.DateTimeFormat.
 * Pure (no clock, no I/O); memoised per zone because the scanner asks about
 * the same few days on every scan.
 *
 * Offsets are sampled every {@link SAMPLE_STEP_MS} and each change between
 * two samples is bisected to the second. That finds every transition as long
 * as a zone never changes its offset twice within one step, which holds for
 * every zone of the tz database since 1970.
 */

/** Offset `o` is in force for instants in `[startMs, endMs)`: local wall time = instant + o. */
export interface OffsetSpan {
  readonly startMs: number;
  readonly endMs: number;
  readonly offsetMs: number;
}

const SAMPLE_STEP_MS = 6 * 3_600_000;
/** A zone's memo is dropped past this many entries; it only grows as time moves on. */
const MEMO_LIMIT = 50_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
const sampleMemo = new Map<string, Map<number, number>>();
const transitionMemo = new Map<string, Map<number, number>>();

/** Local wall time minus UTC at `instantMs`, in ms (America/New_York in winter: -5 h). */
export function utcOffsetAt(timeZone: string, instantMs: number): number {
  const second = Math.floor(instantMs / 1000) * 1000;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let sec = 0;
  for (const part of formatterFor(timeZone).formatToParts(second)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
    else if (part.type === 'second') sec = Number(part.value);
  }
  return Date.UTC(year, month - 1, day, hour, minute, sec) - second;
}

/**
 * Spans of constant offset covering `[fromMs, toMs)`, ascending and
 * adjacent. The first span reaches back to -Infinity and the last forward to
 * +Infinity: callers ask with a margin, so those ends are never relied on.
 */
export function offsetSpans(timeZone: string, fromMs: number, toMs: number): OffsetSpan[] {
  const firstSample = Math.floor(fromMs / SAMPLE_STEP_MS);
  const lastSample = Math.ceil(toMs / SAMPLE_STEP_MS);
  const spans: OffsetSpan[] = [];
  let startMs = -Infinity;
  let offsetMs = sampleOffset(timeZone, firstSample);
  for (let sample = firstSample; sample < lastSample; sample++) {
    const nextOffset = sampleOffset(timeZone, sample + 1);
    if (nextOffset === offsetMs) continue;
    const transitionMs = transitionAfter(timeZone, sample, offsetMs);
    spans.push({ startMs, endMs: transitionMs, offsetMs });
    startMs = transitionMs;
    offsetMs = nextOffset;
  }
  spans.push({ startMs, endMs: Infinity, offsetMs });
  return spans;
}

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

function sampleOffset(timeZone: string, sample: number): number {
  const memo = memoFor(sampleMemo, timeZone);
  let offset = memo.get(sample);
  if (offset === undefined) {
    offset = utcOffsetAt(timeZone, sample * SAMPLE_STEP_MS);
    memo.set(sample, offset);
  }
  return offset;
}

/** The first second after sample `sample` whose offset is no longer `offsetBefore` (bisection). */
function transitionAfter(timeZone: string, sample: number, offsetBefore: number): number {
  const memo = memoFor(transitionMemo, timeZone);
  const known = memo.get(sample);
  if (known !== undefined) return known;
  let before = sample * SAMPLE_STEP_MS;
  let after = before + SAMPLE_STEP_MS;
  while (after - before > 1000) {
    const middle = before + Math.floor((after - before) / 2000) * 1000;
    if (utcOffsetAt(timeZone, middle) === offsetBefore) before = middle;
    else after = middle;
  }
  memo.set(sample, after);
  return after;
}

function memoFor(memos: Map<string, Map<number, number>>, timeZone: string): Map<number, number> {
  let memo = memos.get(timeZone);
  if (memo === undefined || memo.size > MEMO_LIMIT) {
    memo = new Map();
    memos.set(timeZone, memo);
  }
  return memo;
}
