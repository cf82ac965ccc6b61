/**
 * A slice is one occurrence of one job: the unit that is claimed, leased,
 * fenced and committed exactly once. This file holds its shape and the pure
 * rules for moving between states; the stores only translate these rules
 * into conditional writes.
 *
 *   ENQUEUED ──claim──▶ RUNNING ──commit──▶ SUCCEEDED
 *                         │  ▲ └──fail (attempts left)──▶ FAILED ──claim when due──┐
 *                         │  └────────────────────────────────────────────────────┘
 *                         ├──claim by standby once the lease expired (fence + 1)
 *                         └──fail (no attempts left) / takeover past max attempts──▶ DEAD
 */
import type { JobPolicies } from './job-spec.ts';
import type { OperatorSlot } from './operator.ts';

export const SliceStatus = {
  Enqueued: 'ENQUEUED',
  Running: 'RUNNING',
  Succeeded: 'SUCCEEDED',
  Failed: 'FAILED',
  Dead: 'DEAD',
  Skipped: 'SKIPPED',
  Missed: 'MISSED',
} as const;
export type SliceStatus = (typeof SliceStatus)[keyof typeof SliceStatus];

export const FINAL_STATUSES: readonly SliceStatus[] = [SliceStatus.Succeeded, SliceStatus.Dead, SliceStatus.Skipped, SliceStatus.Missed];

export interface SliceKey {
  readonly jobId: string;
  /** Epoch ms, whole seconds. */
  readonly scheduledAt: number;
}

export interface Slice extends SliceKey {
  readonly status: SliceStatus;
  /** Grows by one on every claim; every write after a claim is conditioned on it. */
  readonly fence: number;
  readonly owner?: string;
  readonly leaseExpiresAt?: number;
  /** The queue message the current lease was claimed with. */
  readonly leaseMessageId?: string;
  /** Names the claim request that won the current lease (a resent request is recognised by it). */
  readonly claimToken?: string;
  /** SQS's receive count of the delivery the current lease was claimed with: a later delivery has a higher one. */
  readonly leaseReceiveCount?: number;
  /** Claims so far, including takeovers after a crash. */
  readonly attempts: number;
  /** The status the current claim took the slice from: RUNNING is a takeover from a holder whose lease lapsed. */
  readonly claimedFrom?: SliceStatus;
  readonly handler: string;
  readonly policies: JobPolicies;
  readonly payload?: Record<string, unknown>;
  readonly shard: number;
  /** The job generation that created it (see core/job-lifecycle.ts). */
  readonly generation: number;
  /** SKIPPED: why it did not run. */
  readonly skipReason?: string;
  /** Back to ENQUEUED to wait behind a run of its job (overlap policy bufferOne / bufferAll): when it first waited. */
  readonly bufferedAt?: number;
  /**
   * A range record: one item stands for every occurrence of its generation from its `scheduledAt` to this
   * instant (exclusive). MISSED: older than the catch-up window when a scanner came back; SKIPPED with reason
   * `misfire`: due inside the window but not run under the job's misfire policy (lib/core/advance-plan.ts).
   */
  readonly missedUntil?: number;
  /** Range record: how many occurrences that range holds (capped, see MISSED_COUNT_CAP). */
  readonly missedCount?: number;
  readonly nextAttemptAt?: number;
  readonly lastError?: string;
  readonly createdAt: number;
  readonly startedAt?: number;
  readonly finishedAt?: number;
  /** A slot an operator made (`cronfence jobs trigger` or `backfill`): who, why, and the request. */
  readonly operator?: OperatorSlot;
  /** Present while the slice is in the sweep index (its message may be lost): when the sweep looks at it next. */
  readonly sweepAt?: number;
}

/**
 * The definition a slice is created with: the job's stored one for that
 * generation (`definitionOf`), which the worker reads before the claim (a
 * message never carries it: core/claim-plan.ts), so the claim creates the
 * slice with no write before the run. Only the claim reads it, and only to
 * create or re-create the slice of this generation: it cannot change a slice
 * of another generation (see `isClaimable`).
 */
export interface SliceDefinition {
  readonly generation: number;
  readonly handler: string;
  readonly policies: JobPolicies;
  readonly payload?: Record<string, unknown>;
  readonly shard: number;
}

/**
 * How far apart two processes' clocks may be (each within ±1 s of true time
 * would do; we promise ±2 s each, so 4 s apart). A lease is only judged
 * expired by another process's clock once it is this much past its end, so a
 * holder that keeps renewing is never displaced by a skewed claimer.
 */
export const MAX_CLOCK_SKEW_MS = 2000;
export const LEASE_EXPIRY_MARGIN_MS = 2 * MAX_CLOCK_SKEW_MS;

/** Did this claim take the slice from another holder (a failover), rather than start a first attempt or a due retry? */
export function isTakeover(slice: Pick<Slice, 'claimedFrom'>): boolean {
  return slice.claimedFrom === SliceStatus.Running;
}

export function isFinal(status: SliceStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/**
 * May a worker claim this slice at `now`, holding message `messageId`, with a
 * claim request named `claimToken`? The claim store writes exactly this rule
 * as its condition expression (the contract suite runs both).
 * - A claim given its generation's stored definition (`generation` given)
 *   creates the slice when there is none, and re-creates one that an older
 *   generation left SKIPPED (a job re-enabled or re-added runs that instant
 *   again); otherwise it claims only a slice of its own generation.
 * - The holder's own message coming back means SQS saw its heartbeats lapse:
 *   a takeover that does not depend on the two workers' clocks agreeing.
 * - Any other message needs the lease past its end by the skew margin.
 * - A claim request resent after its reply was lost (same token) does not
 *   win again: it is recognised as already won (see `isOwnClaimResent`).
 */
export function isClaimable(
  slice:
    | Pick<
        Slice,
        'status' | 'leaseExpiresAt' | 'nextAttemptAt' | 'leaseMessageId' | 'claimToken' | 'leaseReceiveCount' | 'generation' | 'missedUntil'
      >
    | undefined,
  now: number,
  messageId?: string,
  claimToken?: string,
  receiveCount?: number,
  generation?: number,
): boolean {
  if (slice === undefined) return generation !== undefined;
  if (generation !== undefined && (slice.generation ?? 0) !== generation) return isRecreatable(slice, generation);
  switch (slice.status) {
    case SliceStatus.Enqueued:
      return true;
    case SliceStatus.Failed:
      return (slice.nextAttemptAt ?? 0) <= now;
    case SliceStatus.Running: {
      const leaseLongExpired = (slice.leaseExpiresAt ?? 0) + LEASE_EXPIRY_MARGIN_MS < now;
      const holdersMessageBack = messageId !== undefined && slice.leaseMessageId === messageId && isLaterDelivery(slice, receiveCount);
      const notThisVeryClaim = claimToken === undefined || slice.claimToken !== claimToken;
      return (leaseLongExpired || holdersMessageBack) && notThisVeryClaim;
    }
    default:
      return false;
  }
}

/**
 * An older generation left this instant SKIPPED (a pause, a change, a delete
 * settled it before it ran): a message of a newer generation runs it. A range
 * record (`missedUntil`) stands for more instants than its own and stays.
 */
export function isRecreatable(slice: Pick<Slice, 'status' | 'generation' | 'missedUntil'>, generation: number): boolean {
  return slice.status === SliceStatus.Skipped && (slice.generation ?? 0) < generation && slice.missedUntil === undefined;
}

/**
 * Is this delivery of the holder's message a later one than the delivery the
 * lease was claimed with? SQS keeps a message's id across deliveries, so
 * "the holder's message came back" must also mean "received again since":
 * an earlier delivery's claim, resent after a stall, must not take over.
 * Unknown counts (an old slice, a caller without them) fall back to the id.
 */
export function isLaterDelivery(slice: Pick<Slice, 'leaseReceiveCount'>, receiveCount: number | undefined): boolean {
  return receiveCount === undefined || slice.leaseReceiveCount === undefined || receiveCount > slice.leaseReceiveCount;
}

/** A lost claim whose slice shows this very claim request as the winner: its first send landed, the reply was lost. */
export function isOwnClaimResent(
  slice: Pick<Slice, 'status' | 'owner' | 'claimToken'> | undefined,
  owner: string,
  claimToken: string,
): boolean {
  return slice !== undefined && slice.status === SliceStatus.Running && slice.owner === owner && slice.claimToken === claimToken;
}

/** What a worker that lost a claim does with its message. */
export type LostClaimAction =
  | { readonly kind: 'drop'; readonly reason: 'final' | 'missing' | 'duplicate' }
  /** An earlier delivery of the holder's own message: its receipt handle is stale, so touch nothing. */
  | { readonly kind: 'leave' }
  /** Hide the message until the holder's lease (or the retry) is due, then look again. */
  | { readonly kind: 'hide'; readonly untilMs: number };

/**
 * A copy other than the message the slice was last claimed with is a
 * duplicate while that message lives: the holder keeps it hidden, and if the
 * holder dies it comes back and admits a standby. Dropping copies keeps
 * duplicates (and sweep re-sends) from circulating until the slice is final;
 * the sweep remains the backstop should that message be lost too.
 */
export function lostClaimAction(
  slice: Slice | undefined,
  now: number,
  messageId?: string,
  receiveCount?: number,
  generation?: number,
): LostClaimAction {
  if (slice === undefined) return { kind: 'drop', reason: 'missing' };
  if (isFinal(slice.status)) return { kind: 'drop', reason: 'final' };
  // Sent for a generation a newer one has replaced on this instant: that generation's own message runs it.
  if (generation !== undefined && (slice.generation ?? 0) > generation) return { kind: 'drop', reason: 'duplicate' };
  const earlierDeliveryOfHolders =
    slice.status === SliceStatus.Running &&
    messageId !== undefined &&
    slice.leaseMessageId === messageId &&
    !isLaterDelivery(slice, receiveCount);
  if (earlierDeliveryOfHolders) return { kind: 'leave' };
  // A newer generation's message is no copy of the message an older generation's run was claimed with: that run,
  // claimed after the change, is about to be skipped, and this message then re-creates the instant. Dropped, the
  // instant waited for the reconciler (a grace and a bucket late); it waits for the run to end instead.
  const newerGeneration = generation !== undefined && (slice.generation ?? 0) < generation;
  const otherCopy = !newerGeneration && messageId !== undefined && slice.leaseMessageId !== undefined && slice.leaseMessageId !== messageId;
  if (otherCopy && (slice.status === SliceStatus.Running || slice.status === SliceStatus.Failed))
    return { kind: 'drop', reason: 'duplicate' };
  if (slice.status === SliceStatus.Running)
    return { kind: 'hide', untilMs: Math.max(now, (slice.leaseExpiresAt ?? now) + LEASE_EXPIRY_MARGIN_MS) };
  if (slice.status === SliceStatus.Failed) return { kind: 'hide', untilMs: Math.max(now, slice.nextAttemptAt ?? now) };
  // ENQUEUED yet the claim failed: a racing claimer changed it in between; look again soon.
  return { kind: 'hide', untilMs: now };
}

/**
 * How long a claimed slice's message stays hidden after each heartbeat: one
 * heartbeat short of the lease. The holder's own message coming back admits a
 * standby (see `isClaimable`), so a holder whose heartbeats stop is replaced
 * this long after its last one, by the queue's clock, not any worker's.
 */
export function messageVisibilitySeconds(policies: Pick<JobPolicies, 'leaseMs' | 'heartbeatMs'>): number {
  return Math.max(1, Math.ceil((policies.leaseMs - policies.heartbeatMs) / 1000));
}

/** After a failed attempt: retry later, or give up. */
export function afterFailure(attempts: number, policies: Pick<JobPolicies, 'maxAttempts'>): 'retry' | 'dead' {
  return attempts >= policies.maxAttempts ? 'dead' : 'retry';
}

/**
 * When the sweep should look at a slice again if nothing else has moved it:
 * a live slice whose message was lost is found by this instant.
 */
export function sweepAtFor(status: SliceStatus, at: { scheduledAt: number; now: number; nextAttemptAt?: number; graceMs: number }): number {
  switch (status) {
    case SliceStatus.Enqueued:
      return Math.max(at.scheduledAt, at.now) + at.graceMs;
    case SliceStatus.Failed:
      return (at.nextAttemptAt ?? at.now) + at.graceMs;
    default:
      return at.now;
  }
}

/**
 * When a swept slice is looked at again: after the grace, or after half its
 * age so far if longer. A slice that is late because workers are behind (not
 * because its message was lost) is re-sent a logarithmic number of times,
 * not once per grace: under overload the sweep must not add load linearly.
 */
export function sweepAgainAt(slice: SliceKey, now: number, graceMs: number): number {
  return now + Math.max(graceMs, Math.floor((now - slice.scheduledAt) / 2));
}
