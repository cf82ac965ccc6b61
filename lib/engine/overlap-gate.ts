/**
 * Applies a job's overlap policy to a slice the worker just claimed, before
 * its handler starts (the decision is core/overlap-policy.ts's): run it,
 * skip it, put it back to wait, or fence out the run it replaces; a run
 * takes the job's lane first. Jobs whose policy is `allow` (the default)
 * never get here and cost nothing more. The rest pay, per claim: one read of
 * the lane, one of the lane's run (when it is another slot's), for bufferOne
 * and bufferAll one Query of the line (at most LINE_READ_LIMIT slices read),
 * and to run, one write of the lane.
 */
import type { Clock } from '../core/clock.ts';
import { CronfenceError, LeaseLostError } from '../core/errors.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { decideOverlap, LINE_READ_LIMIT, readsLine, type OverlapDecision, type OverlapLane } from '../core/overlap-policy.ts';
import type { OverlapStore, SliceStore } from '../core/ports.ts';
import { sweepAtFor, SliceStatus, type Slice } from '../core/slice.ts';
import type { HeldMessage } from './held-message.ts';

export interface OverlapGateDeps {
  readonly workerId: string;
  readonly overlap: OverlapStore;
  readonly slices: Pick<SliceStore, 'skipClaimed' | 'get'>;
  readonly events: EventSink;
  readonly clock: Clock;
  readonly sweepGraceMs: number;
}

/** Takes of the lane lost to another claim before this one gives up (each loss means another run just took it). */
const LANE_TRIES = 4;

/**
 * @returns `run` to go on with the handler, or what to do with the message:
 * `delete` (skipped) or `keep` (waiting, or the claim was lost meanwhile).
 */
export async function passOverlapGate(
  deps: OverlapGateDeps,
  slice: Slice,
  held: Pick<HeldMessage, 'hide'>,
): Promise<'run' | 'delete' | 'keep'> {
  try {
    for (let tries = 0; tries < LANE_TRIES; tries++) {
      const now = deps.clock.now();
      const { lane, decision } = await judge(deps, slice, now);
      const outcome = await apply(deps, slice, held, decision, now);
      if (outcome !== 'run') return outcome;
      if (lane?.runAt === slice.scheduledAt || (await deps.overlap.takeLane(slice.jobId, lane, slice.scheduledAt, now))) return 'run';
    }
  } catch (error) {
    // A standby took this slice over while the gate ran: it is theirs to judge now.
    if (error instanceof LeaseLostError) return 'keep';
    throw error;
  }
  throw new CronfenceError(
    `overlap gate of ${slice.jobId} at ${new Date(slice.scheduledAt).toISOString()}: the lane was taken by another claim ${LANE_TRIES} times in a row`,
  );
}

/** Reads the lane, its run and (for the buffers) the line ahead of `slice`, and decides. */
async function judge(
  deps: OverlapGateDeps,
  slice: Slice,
  now: number,
): Promise<{ lane: OverlapLane | undefined; decision: OverlapDecision }> {
  const policy = slice.policies.overlap;
  const lane = await deps.overlap.lane(slice.jobId);
  const holdsLane = lane?.runAt === slice.scheduledAt;
  const laneRun = lane && !holdsLane ? await deps.slices.get({ jobId: slice.jobId, scheduledAt: lane.runAt }) : undefined;
  const aheadInLine =
    lane && !holdsLane && readsLine(policy)
      ? await deps.overlap.firstInLine(slice.jobId, lane.runAt, slice.scheduledAt, LINE_READ_LIMIT)
      : undefined;
  return { lane, decision: decideOverlap(policy, { holdsLane, laneRun, aheadInLine }, now) };
}

/** @returns `run` when the slice may take the lane and run; otherwise what to do with its message. */
async function apply(
  deps: OverlapGateDeps,
  slice: Slice,
  held: Pick<HeldMessage, 'hide'>,
  decision: OverlapDecision,
  now: number,
): Promise<'run' | 'delete' | 'keep'> {
  const emitSkipped = (key: Slice, reason: string): void =>
    deps.events.emit(lifecycleEvent('skipped', key, deps.clock.now(), { fence: key.fence, worker: deps.workerId, reason }));
  switch (decision.kind) {
    case 'run':
      return 'run';
    case 'skip':
      await deps.slices.skipClaimed({ key: slice, fence: slice.fence }, decision.reason, now);
      emitSkipped(slice, decision.reason);
      return 'delete';
    case 'wait': {
      const sweepAt = sweepAtFor(SliceStatus.Enqueued, { scheduledAt: decision.untilMs, now, graceMs: deps.sweepGraceMs });
      await deps.overlap.deferClaimed({ key: slice, fence: slice.fence }, now, sweepAt);
      // Said once the slice is given back, before the hide: a hide that fails leaves the slice just as buffered (its
      // message returns sooner, to a claim the gate judges again), and no slice is given back without its event.
      deps.events.emit(
        lifecycleEvent('buffered', slice, deps.clock.now(), {
          fence: slice.fence,
          worker: deps.workerId,
          retryAt: new Date(decision.untilMs).toISOString(),
        }),
      );
      await held.hide(Math.ceil((decision.untilMs - now) / 1000));
      return 'keep';
    }
    case 'replace': {
      const { victim } = decision;
      if (await deps.overlap.fenceOut({ key: victim, fence: victim.fence }, now))
        emitSkipped({ ...victim, fence: victim.fence + 1 }, 'replaced');
      return 'run';
    }
  }
}
