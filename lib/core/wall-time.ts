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

/**
 * The wall times whose instants can fall in `[fromMs, toMs)`: from the
 * lowest wall time any such instant has (or, right after a gap, the shifted
 * one it came from) to past the highest. Tight: without a transition in range
 * it is exactly `[fromMs + o, toMs + o)`.
 */
export function wallTimeRange(spans: readonly OffsetSpan[], fromMs: number, toMs: number): { start: number; end: number } {
  let start = Infinity;
  let end = -Infinity;
  spans.forEach((span, index) => {
    if (span.endMs <= fromMs || span.startMs >= toMs) return;
    const first = Math.max(span.startMs, fromMs);
    start = Math.min(start, first + span.offsetMs);
    end = Math.max(end, Math.min(span.endMs, toMs) + span.offsetMs);
    const previous = spans[index - 1];
    // Instants just after a gap are also the shifted images of the gap's wall times, which read lower.
    if (previous && previous.offsetMs < span.offsetMs && first < span.startMs + span.offsetMs - previous.offsetMs) {
      start = Math.min(start, first + previous.offsetMs);
    }
  });
  return { start, end };
}
