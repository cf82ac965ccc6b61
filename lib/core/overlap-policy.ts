/**
 * The overlap policy: what a just-claimed occurrence does when another
 * occurrence of its job is still running. Pure; the worker reads the job's
 * lane and line, asks here, and applies the answer (engine/overlap-gate.ts).
 *
 *   allow      run (no read at all: today's behaviour)
 *   skip       SKIPPED, reason `overlap`
 *   bufferAll  wait: back to ENQUEUED (the claim undone), the message hidden
 *              for a while, then claimed and judged again; runs once nothing
 *              runs and no occurrence ahead of it in line waits
 *   bufferOne  as bufferAll, unless another occurrence already waits in line:
 *              then SKIPPED, reason `overlap` (one waits, later ones drop)
 *   replace    the running one is fenced out (SKIPPED, reason `replaced`, its
 *              fence + 1: its next renewal fails, its `ctx.signal` fires and
 *              its commit is refused), and this one runs
 *
 * The lane: one item per job naming the slot of the run that last took it. An
 * occurrence runs only once it took the lane (a conditional write on the
 * version it read), and it may take it only when the lane's run is no longer
 * live. So the one run that can be live is found with one read of the lane
 * and one of its slice, however many occurrences ago it started, and two
 * claims racing for the lane agree on who runs: the write that landed first.
 *
 * The line (bufferOne, bufferAll): the slices after the lane's run and before
 * this occurrence that are still ENQUEUED or RUNNING: occurrences waiting
 * their turn, or being judged. Only the earliest matters, so the read stops
 * at the first (at most LINE_READ_LIMIT slices read). A waiting occurrence
 * takes its turn only when none waits ahead of it: buffered occurrences run
 * in slot order and a newer one never overtakes an older one that waits.
 *
 * The policy is a scheduling rule, not a lock: a run whose lease lapsed while
 * its holder was paused is judged gone, and may still be running when the
 * next takes the lane. The fence and the execution key protect a handler's
 * effects (docs/schedules.md).
 */
import type { OverlapPolicy } from './job-spec.ts';
import { LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice } from './slice.ts';

/** A job's overlap lane, as stored. */
export interface OverlapLane {
  /** The slot of the run that last took the lane. */
  readonly runAt: number;
  /** Raised by each take: the condition of the next. */
  readonly version: number;
}

/** What the gate read for one just-claimed occurrence. */
export interface OverlapView {
  /** This occurrence took the lane before (a takeover or a retry of the lane's run): it runs. */
  readonly holdsLane: boolean;
  /** The lane's run, when it is another slot's (undefined: no lane, or its slice is gone). */
  readonly laneRun?: Slice;
  /** The earliest slice waiting in line ahead of this one (read for bufferOne and bufferAll only). */
  readonly aheadInLine?: Slice;
}

export type OverlapDecision =
  /** Take the lane (unless it holds it already) and run. */
  | { readonly kind: 'run' }
  | { readonly kind: 'skip'; readonly reason: 'overlap'; readonly ahead: Slice }
  | { readonly kind: 'wait'; readonly untilMs: number; readonly ahead: Slice }
  /** Fence the lane's run out, then take the lane and run. */
  | { readonly kind: 'replace'; readonly victim: Slice };

/** A waiting occurrence is looked at again after a quarter of what the run ahead may still take, within these bounds. */
export const MIN_WAIT_MS = 1000;
export const MAX_WAIT_MS = 60_000;
/** Behind an occurrence that waits in line while nothing runs: it takes the lane when its own message returns. */
export const LINE_WAIT_MS = 5000;
/** At most this many slices read to find the first one waiting in line. */
export const LINE_READ_LIMIT = 50;

/** Does `policy` read the line as well as the lane? */
export function readsLine(policy: OverlapPolicy | undefined): boolean {
  return policy === 'bufferOne' || policy === 'bufferAll';
}

export function decideOverlap(policy: OverlapPolicy | undefined, view: OverlapView, now: number): OverlapDecision {
  if (policy === undefined || policy === 'allow' || view.holdsLane) return { kind: 'run' };
  const running = view.laneRun !== undefined && isLiveRun(view.laneRun, now) ? view.laneRun : undefined;
  const waiting = view.aheadInLine;
  switch (policy) {
    case 'skip':
      return running ? { kind: 'skip', reason: 'overlap', ahead: running } : { kind: 'run' };
    case 'replace':
      return running ? { kind: 'replace', victim: running } : { kind: 'run' };
    case 'bufferOne':
      if (waiting) return { kind: 'skip', reason: 'overlap', ahead: waiting };
      return running ? { kind: 'wait', untilMs: now + waitMs(running, now), ahead: running } : { kind: 'run' };
    case 'bufferAll':
      if (running) return { kind: 'wait', untilMs: now + waitMs(running, now), ahead: running };
      return waiting ? { kind: 'wait', untilMs: now + LINE_WAIT_MS, ahead: waiting } : { kind: 'run' };
  }
}

/** RUNNING under a lease no claimer could yet judge lapsed. */
export function isLiveRun(slice: Slice, now: number): boolean {
  return slice.status === SliceStatus.Running && (slice.leaseExpiresAt ?? 0) + LEASE_EXPIRY_MARGIN_MS > now;
}

/** In line: not final and not waiting for a retry (a failed run already had its turn). */
export function isInLine(slice: Pick<Slice, 'status'>): boolean {
  return slice.status === SliceStatus.Enqueued || slice.status === SliceStatus.Running;
}

/** A quarter of what the run ahead may still take (up to its timeout), so a long run costs few deliveries. */
function waitMs(ahead: Slice, now: number): number {
  const timeoutEnd = (ahead.startedAt ?? now) + ahead.policies.timeoutMs;
  return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.floor((timeoutEnd - now) / 4)));
}
