/**
 * The condition of every slice write after the claim, as pure predicates
 * (the claim's own rule is `isClaimable` in slice.ts; which writes need the
 * owner as well as the fence is core/claim.ts's rule). Each operation in
 * lib/aws/dynamo writes one of these as its condition expression; the
 * in-memory store (lib/memory) executes them as they are; the contract suite
 * (test/contract) runs the same cases against both, so the spec and the
 * DynamoDB condition cannot drift apart unnoticed.
 *
 *   operation        store file                         predicate
 *   RENEW            renew-lease.ts                     holdsLease
 *   FAIL, SKIP       record-failure.ts, skip-slice.ts   holdsLease
 *   FINALIZE         finalize-slice.ts [0]              mayFinalize
 *   refused FINALIZE finalize-slice.ts                 finalizeRefusal
 *   CREATE           create-slices.ts                   mayCreateSlice
 *   FOLLOW           reconcile-ops.ts                   holdsLease, out of the sweep index
 *   SETTLE           settle-pending-slices.ts           maySettle
 *   DEFER SWEEP      sweep.ts                           mayDeferSweep
 */
import type { Claim } from './claim.ts';
import { FencedOutError, OutcomeOnRecordError } from './errors.ts';
import { isOwnClaim, isOwnCommit, type LedgerOutcome, type LedgerRecord } from './ledger.ts';
import { isRecreatable, SliceStatus, type Slice } from './slice.ts';

/** A transaction holds 100 items; the slice, which carries the ledger record, takes one. */
export const MAX_BUSINESS_WRITES_PER_COMMIT = 99;
/** Longest error text kept on a slice or a DEAD ledger record. */
export const MAX_ERROR_CHARS = 2000;

/** Slices an older generation left that a new generation may create again: none of them ran to a ledger record. */
export const RECREATABLE_STATUSES: readonly SliceStatus[] = [SliceStatus.Enqueued, SliceStatus.Failed, SliceStatus.Skipped];
/** Slices that have not started and would start later: what a job change settles. */
export const PENDING_STATUSES: readonly SliceStatus[] = [SliceStatus.Enqueued, SliceStatus.Failed];

/** RENEW, FAIL: the caller's claim is still the slice's current one, and still running. */
export function holdsLease<T extends Pick<Slice, 'status' | 'fence'>>(slice: T | undefined, fence: number): slice is T {
  return slice !== undefined && slice.status === SliceStatus.Running && slice.fence === fence;
}

/** FINALIZE (commit or DEAD), the slice item: this claim, by this owner, still running. */
export function mayFinalize<T extends Pick<Slice, 'status' | 'fence' | 'owner'>>(
  slice: T | undefined,
  fence: number,
  owner: string,
): slice is T {
  return holdsLease(slice, fence) && slice?.owner === owner;
}

/** A FINALIZE: the claim it ends (on its fence and owner, core/claim.ts), when, with which outcome. */
export interface Finalize extends Claim {
  readonly now: number;
  readonly outcome: LedgerOutcome;
  /** For DEAD: the last error. */
  readonly error?: string;
}

/** Why a finalize whose slice condition failed wrote nothing, judged from the ledger record the slice carries. */
export type FinalizeRefusal =
  /** An earlier try of this very finalize landed (its reply was lost): report success. */
  | 'own-earlier-try'
  /** This claim already ended with the other outcome (OutcomeOnRecordError). */
  | 'other-outcome-on-record'
  /** A newer claim owns the slice, or it is final by someone else (FencedOutError). */
  | 'fenced-out';

export function refusedFinalize(ledger: LedgerRecord | undefined, fence: number, owner: string, outcome: LedgerOutcome): FinalizeRefusal {
  if (isOwnCommit(ledger, fence, owner, outcome)) return 'own-earlier-try';
  if (isOwnClaim(ledger, fence, owner)) return 'other-outcome-on-record';
  return 'fenced-out';
}

/**
 * What a refused finalize of `executionKey` ends in, judged by `refusedFinalize`: undefined when its own earlier try
 * landed (success), else the error to throw (OutcomeOnRecordError, FencedOutError). Both stores call this one rule.
 */
export function finalizeRefusal(
  ledger: LedgerRecord | undefined,
  request: Pick<Finalize, 'fence' | 'owner' | 'outcome'>,
  executionKey: string,
  cause?: unknown,
): OutcomeOnRecordError | FencedOutError | undefined {
  const refusal = refusedFinalize(ledger, request.fence, request.owner, request.outcome);
  if (refusal === 'own-earlier-try') return undefined;
  if (refusal === 'other-outcome-on-record' && ledger !== undefined)
    return new OutcomeOnRecordError(executionKey, ledger.outcome, { cause });
  return new FencedOutError(executionKey, request.fence, { cause });
}

/**
 * CREATE (an ENQUEUED slice, a range record, a change's SKIPPED): no slice at
 * this instant, or one an older generation left without a ledger record (a
 * slice without a generation is generation 0).
 */
export function mayCreateSlice(existing: Pick<Slice, 'status' | 'generation'> | undefined, generation: number): boolean {
  if (existing === undefined) return true;
  return RECREATABLE_STATUSES.includes(existing.status) && (existing.generation ?? 0) < generation;
}

/**
 * What stands for each instant of `generation` among a job's `slices`: its own
 * slice, unless it is one this generation re-creates (an older generation's
 * SKIPPED: `isRecreatable`), or a range record of this generation covering it.
 * Undefined: the instant has no record of this generation's yet.
 */
export function recordStandingAt(slices: readonly Slice[], generation: number): (at: number) => Slice | undefined {
  const byInstant = new Map(slices.map((slice) => [slice.scheduledAt, slice]));
  const ranges = slices.filter((slice) => slice.missedUntil !== undefined && (slice.generation ?? 0) === generation);
  return (at) => {
    const own = byInstant.get(at);
    if (own !== undefined && !isRecreatable(own, generation)) return own;
    return ranges.find((range) => range.scheduledAt <= at && at < (range.missedUntil ?? 0));
  };
}

/** What a RANGE write did (SliceStore.recordRange). */
export type RangeRecordOutcome =
  | { readonly outcome: 'written' | 'kept' }
  /** `until`: the recorded item's end (exclusive), which a racing scan's clock may have put past this one's. */
  | { readonly outcome: 'recorded'; readonly until: number };

/**
 * A refused RANGE write, judged from the item at its instant: this generation's range record already (another scan
 * wrote it), with the end it records, or another slice that keeps the instant.
 */
export function rangeRecordOutcome(slice: Pick<Slice, 'missedUntil' | 'generation'> | undefined, generation: number): RangeRecordOutcome {
  return slice?.missedUntil !== undefined && (slice.generation ?? 0) === generation
    ? { outcome: 'recorded', until: slice.missedUntil }
    : { outcome: 'kept' };
}

/**
 * SETTLE PENDING: a pending slice of a generation older than the job's new
 * one. A slice already claimed runs to its end; one re-created for the new
 * generation stays.
 */
export function maySettle(slice: Pick<Slice, 'status' | 'generation'> | undefined, generation: number): boolean {
  return slice !== undefined && PENDING_STATUSES.includes(slice.status) && (slice.generation ?? 0) < generation;
}

/**
 * DEFER SWEEP: the slice still has the sweep time the sweep read. A claim or
 * a failure since then set its own, and a final slice has none (it left the
 * sweep index): a stale deferral must not overwrite either.
 */
export function mayDeferSweep(currentSweepAt: number | undefined, sweepAtRead: number): boolean {
  return currentSweepAt !== undefined && currentSweepAt === sweepAtRead;
}
