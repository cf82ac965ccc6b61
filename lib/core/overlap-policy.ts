/**
 * The overlap policy: what a just-claimed occurrence does when another
 * occurrence of its job is still running. Pure; the worker reads the job's
 * recent slices, asks here, and applies the answer (engine/overlap-gate.ts).
 *
 *   allow      run (no read at all: today's behaviour)
 *   skip       SKIPPED, reason `overlap`
 *   bufferAll  wait: back to ENQUEUED (the claim undone), the message hidden
 *              for a while, then claimed and judged again; runs once nothing
 *              ahead of it runs
 *   bufferOne  as bufferAll, unless an earlier occurrence is already waiting:
 *              then SKIPPED, reason `overlap` (one waits, later ones drop)
 *   replace    the running one is fenced out (SKIPPED, reason `replaced`, its
 *              fence + 1: its next renewal fails, its `ctx.signal` fires and
 *              its commit is refused), and this one runs
 *
 * Who is ahead: a RUNNING slice of the job whose lease is live and that was
 * claimed first (`startedAt`, ties by the earlier occurrence), so two
 * occurrences racing each other agree on which one yields. A claim time is
 * each claimer's own clock: two claims closer together than the clocks
 * disagree (±2 s) may both judge themselves first and both run. The policy
 * is a scheduling rule, not a lock: the fence and the execution key are what
 * protect a handler's effects (docs/schedules.md).
 */
import type { OverlapPolicy } from './job-spec.ts';
import { LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice } from './slice.ts';

export type OverlapDecision =
  | { readonly kind: 'run' }
  | { readonly kind: 'skip'; readonly reason: 'overlap'; readonly ahead: Slice }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly ahead: Slice }
  | { readonly kind: 'replace'; readonly victims: readonly Slice[] };

/** A waiting occurrence is looked at again after a quarter of what the run ahead may still take, within these bounds. */
export const MIN_WAIT_MS = 1000;
export const MAX_WAIT_MS = 60_000;
/** How many of the job's most recent slices the worker reads to judge overlap. */
export const OVERLAP_READ_LIMIT = 25;

export function decideOverlap(policy: OverlapPolicy | undefined, me: Slice, recent: readonly Slice[], now: number): OverlapDecision {
  if (policy === undefined || policy === 'allow') return { kind: 'run' };
  const others = recent.filter((slice) => slice.scheduledAt !== me.scheduledAt);
  const ahead = others.filter((slice) => isLiveRun(slice, now) && claimedBefore(slice, me)).sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0));
  const first = ahead[0];
  if (first === undefined) return { kind: 'run' };
  switch (policy) {
    case 'skip':
      return { kind: 'skip', reason: 'overlap', ahead: first };
    case 'replace':
      return { kind: 'replace', victims: ahead };
    case 'bufferOne':
      if (others.some((slice) => isWaiting(slice) && slice.scheduledAt < me.scheduledAt)) return { kind: 'skip', reason: 'overlap', ahead: first };
      return { kind: 'wait', untilMs: now + waitMs(first, now), ahead: first };
    case 'bufferAll':
      return { kind: 'wait', untilMs: now + waitMs(first, now), ahead: first };
  }
}

/** RUNNING under a lease no claimer could yet judge lapsed. */
function isLiveRun(slice: Slice, now: number): boolean {
  return slice.status === SliceStatus.Running && (slice.leaseExpiresAt ?? 0) + LEASE_EXPIRY_MARGIN_MS > now;
}

function claimedBefore(other: Slice, me: Slice): boolean {
  const theirs = other.startedAt ?? 0;
  const mine = me.startedAt ?? Number.MAX_SAFE_INTEGER;
  return theirs < mine || (theirs === mine && other.scheduledAt < me.scheduledAt);
}

/** Waiting under bufferOne / bufferAll: back to ENQUEUED with its first wait recorded. */
function isWaiting(slice: Slice): boolean {
  return slice.status === SliceStatus.Enqueued && slice.bufferedAt !== undefined;
}

/** A quarter of what the run ahead may still take (up to its timeout), so a long run costs few deliveries. */
function waitMs(ahead: Slice, now: number): number {
  const timeoutEnd = (ahead.startedAt ?? now) + ahead.policies.timeoutMs;
  return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.floor((timeoutEnd - now) / 4)));
}
