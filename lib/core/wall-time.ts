/**
 * Local wall time <-> instants, given a zone's offset spans (zone-offsets.ts)
 * and a DST policy. A wall time is written as epoch ms of that wall clock read
 * as if it were UTC ("naive" wall time): 2026-03-08 02:30 is
 * Date.UTC(2026, 2, 8, 2, 30). An instant t in a span with offset o has wall
 * time t + o; so the instants of wall w are the w - o that fall in their own
 * span: none (a spring-forward gap), one, or two (a fall-back repeat).
 */
import type { OffsetSpan } from './zone-offsets.ts';

/** What a job does when DST makes one of its local times not exist, or exist twice. */
export interface DstPolicy {
  /**
   * A local time skipped by spring-forward: `shift` runs it at the same wall
   * time moved forward by the gap (02:30 -> 03:30 EDT), `skip` does not run it.
   * @default 'shift'
   */
  readonly gap: 'shift' | 'skip';
  /**
   * A local time repeated by fall-back: `once` runs it at its first
   * occurrence (01:30 EDT), `twice` at both (01:30 EDT and 01:30 EST).
   * @default 'once'
   */
  readonly repeat: 'once' | 'twice';
}

export const DEFAULT_DST_POLICY: DstPolicy = { gap: 'shift', repeat: 'once' };

/** The instants wall time `wall` maps to under `policy`, ascending (zero, one or two). */
export function instantsOfWallTime(wall: number, spans: readonly OffsetSpan[], policy: DstPolicy): number[] {
  const found: number[] = [];
  for (const span of spans) {
    const instant = wall - span.offsetMs;
    if (instant >= span.startMs && instant < span.endMs) found.push(instant);
  }
  if (found.length === 0) return policy.gap === 'skip' ? [] : shiftedOverGap(wall, spans);
  found.sort((a, b) => a - b);
  return policy.repeat === 'once' ? found.slice(0, 1) : found;
}

/**
 * A wall time inside a gap, moved forward by the gap: read it with the
 * offset in force before the gap (02:30 at -5 h is 07:30Z, which is 03:30 EDT).
 */
function shiftedOverGap(wall: number, spans: readonly OffsetSpan[]): number[] {
  for (let index = 1; index < spans.length; index++) {
    const before = spans[index - 1] as OffsetSpan;
    const after = spans[index] as OffsetSpan;
    const gapStart = after.startMs + before.offsetMs;
    const gapEnd = after.startMs + after.offsetMs;
    if (wall >= gapStart && wall < gapEnd) return [wall - before.offsetMs];
  }
  return [];
}

/** Wall times `[start, end)`. */
export interface WallTimeInterval {
  readonly start: number;
  readonly end: number;
}

/**
 * The wall times whose occurrences can fall in `[fromMs, toMs)` under
 * `policy`, as ascending disjoint intervals. Per span: its own wall times
 * (`[from + o, to + o)` away from a change), less a repeated hour's second
 * pass under `once` (those wall times ran in the first), plus, right after a
 * gap under `shift`, the gap's wall times whose shifted instants land here.
 * Nothing else is enumerated: a per-second cron costs a cron step per
 * occurrence on a DST day too.
 */
export function wallTimeIntervals(spans: readonly OffsetSpan[], fromMs: number, toMs: number, policy: DstPolicy): WallTimeInterval[] {
  const intervals: WallTimeInterval[] = [];
  spans.forEach((span, index) => {
    let first = Math.max(span.startMs, fromMs);
    const end = Math.min(span.endMs, toMs);
    const previous = spans[index - 1];
    if (previous && previous.offsetMs < span.offsetMs && policy.gap === 'shift') {
      const shiftedEnd = Math.min(end, span.startMs + span.offsetMs - previous.offsetMs);
      if (first < shiftedEnd) intervals.push({ start: first + previous.offsetMs, end: shiftedEnd + previous.offsetMs });
    }
    if (previous && previous.offsetMs > span.offsetMs && policy.repeat === 'once') {
      first = Math.max(first, span.startMs + previous.offsetMs - span.offsetMs);
    }
    if (first < end) intervals.push({ start: first + span.offsetMs, end: end + span.offsetMs });
  });
  return mergeIntervals(intervals);
}

/** An upper bound (exclusive) on the wall time of any instant in `[fromMs, toMs)`, shifted ones included. */
export function wallTimeCeiling(spans: readonly OffsetSpan[], fromMs: number, toMs: number): number {
  let ceiling = -Infinity;
  for (const span of spans) {
    if (span.endMs > fromMs && span.startMs < toMs) ceiling = Math.max(ceiling, Math.min(span.endMs, toMs) + span.offsetMs);
  }
  return ceiling;
}

function mergeIntervals(intervals: WallTimeInterval[]): WallTimeInterval[] {
  intervals.sort((a, b) => a.start - b.start);
  const merged: WallTimeInterval[] = [];
  for (const interval of intervals) {
    const last = merged.at(-1);
    if (last && interval.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, interval.end) };
    else merged.push(interval);
  }
  return merged;
}
