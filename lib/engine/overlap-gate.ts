/**
 * Applies a job's overlap policy to a slice the worker just claimed, before
 * its handler starts (the decision is core/overlap-policy.ts's): run it,
 * skip it, put it back to wait, or fence out the run it replaces. Jobs whose
 * policy is `allow` (the default) never get here and cost nothing more.
 */
import type { Clock } from '../core/clock.ts';
import { LeaseLostError } from '../core/errors.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { decideOverlap, OVERLAP_READ_LIMIT } from '../core/overlap-policy.ts';
import type { OverlapStore, SliceStore, WorkQueue } from '../core/ports.ts';
import { sweepAtFor, SliceStatus, type Slice } from '../core/slice.ts';

export interface OverlapGateDeps {
  readonly workerId: string;
  readonly overlap: OverlapStore;
  readonly slices: Pick<SliceStore, 'skipClaimed'>;
  readonly queue: WorkQueue;
  readonly events: EventSink;
  readonly clock: Clock;
  readonly sweepGraceMs: number;
}

/** Slices no later than this past now can be RUNNING (a claim comes at most 2 s early): the read's upper bound. */
const RUNNING_AHEAD_MS = 5000;

/**
 * @returns `run` to go on with the handler, or what to do with the message:
 * `delete` (skipped) or `keep` (waiting, or the claim was lost meanwhile).
 */
export async function passOverlapGate(deps: OverlapGateDeps, slice: Slice, receiptHandle: string): Promise<'run' | 'delete' | 'keep'> {
  const now = deps.clock.now();
  const recent = await deps.overlap.recentSlices(slice.jobId, Math.max(now, slice.scheduledAt) + RUNNING_AHEAD_MS, OVERLAP_READ_LIMIT);
  const decision = decideOverlap(slice.policies.overlap, slice, recent, now);
  const emitSkipped = (key: Slice, reason: string): void =>
    deps.events.emit(lifecycleEvent('skipped', key, deps.clock.now(), { fence: key.fence, worker: deps.workerId, reason }));
  try {
    switch (decision.kind) {
      case 'run':
        return 'run';
      case 'skip':
        await deps.slices.skipClaimed(slice, slice.fence, decision.reason, now);
        emitSkipped(slice, decision.reason);
        return 'delete';
      case 'wait': {
        const sweepAt = sweepAtFor(SliceStatus.Enqueued, { scheduledAt: decision.untilMs, now, graceMs: deps.sweepGraceMs });
        await deps.overlap.deferClaimed(slice, slice.fence, now, sweepAt);
        // Said once the slice is given back, before the hide: a hide that fails leaves the slice just as buffered (its
        // message returns sooner, to a claim the gate judges again). Emitted after it, a throttled hide left a slice
        // given back without its event, and a drill read the next claim as a takeover of a live holder (2026-12-05).
        deps.events.emit(lifecycleEvent('buffered', slice, deps.clock.now(), { fence: slice.fence, worker: deps.workerId, retryAt: new Date(decision.untilMs).toISOString() }));
        await deps.queue.hide(receiptHandle, Math.ceil((decision.untilMs - now) / 1000));
        return 'keep';
      }
      case 'replace':
        for (const victim of decision.victims) {
          if (await deps.overlap.fenceOut(victim, victim.fence, now)) emitSkipped({ ...victim, fence: victim.fence + 1 }, 'replaced');
        }
        return 'run';
    }
  } catch (error) {
    // A standby took this slice over while the gate ran: it is theirs to judge now.
    if (error instanceof LeaseLostError) return 'keep';
    throw error;
  }
}
