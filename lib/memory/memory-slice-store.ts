/**
 * The SliceStore port in memory. Each method is the operation of the same
 * name in lib/aws/dynamo (claim-slice.ts, renew-lease.ts, record-failure.ts,
 * finalize-slice.ts, sweep.ts): the same condition, taken from the pure rules
 * in lib/core (isClaimable, slice-transitions.ts), and the same effect on the
 * same attributes. test/contract runs one suite against both.
 */
import { randomUUID } from 'node:crypto';
import type { Claim, FencedClaim } from '../core/claim.ts';
import type { MissedRange, SkippedRange } from '../core/advance-plan.ts';
import { LeaseLostError, TooManyWritesError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import type { SkipReason } from '../core/job-record.ts';
import { ledgerRecordOf, type LedgerRecord } from '../core/ledger.ts';
import type {
  BusinessWrite,
  ClaimOutcome,
  MessageBackChange,
  NewSlice,
  NotRunStatus,
  RangeRecordOutcome,
  SliceStore,
  SweepCandidate,
} from '../core/ports.ts';
import { isClaimable, isRecreatable, SliceStatus, type Slice, type SliceDefinition, type SliceKey } from '../core/slice.ts';
import {
  holdsLease,
  MAX_BUSINESS_WRITES_PER_COMMIT,
  MAX_ERROR_CHARS,
  rangeRecordOutcome,
  mayCreateSlice,
  mayDeferSweep,
  mayFinalize,
  finalizeRefusal,
  type Finalize,
} from '../core/slice-transitions.ts';
import { planBusinessWrites } from './memory-business-writes.ts';
import { sliceId, toSlice, type MemoryTables, type SliceRow } from './memory-tables.ts';

interface FinalizeRequest extends Finalize {
  readonly writes?: readonly BusinessWrite[];
}

export class InMemorySliceStore implements SliceStore {
  constructor(private readonly tables: MemoryTables) {}

  /**
   * CLAIM: the condition is `isClaimable`; effect as claim-slice.ts: a slice
   * created from the given (stored) definition, or re-created over an older
   * generation's SKIPPED one, or the existing slice claimed.
   */
  async claim(
    key: SliceKey,
    owner: string,
    now: number,
    messageId?: string,
    receiveCount?: number,
    run?: SliceDefinition,
  ): Promise<ClaimOutcome> {
    const token = randomUUID();
    const id = sliceId(key);
    const existing = this.tables.slices.get(id);
    // One call is one request here, so a resent request (isOwnClaimResent) cannot occur.
    if (!isClaimable(existing, now, messageId, token, receiveCount, run?.generation))
      return { won: false, current: existing && toSlice(existing) };
    const fresh = existing === undefined || (run !== undefined && isRecreatable(existing, run.generation));
    const row: SliceRow = fresh && run ? this.createdRow(key, run, now, existing) : (existing as SliceRow);
    row.claimedFrom = existing === undefined || fresh ? SliceStatus.Enqueued : row.status;
    row.status = SliceStatus.Running;
    row.fence += 1;
    row.owner = owner;
    row.leaseExpiresAt = row.leaseMs + now;
    row.attempts += 1;
    row.startedAt = now;
    row.claimToken = token;
    row.leaseMessageId = messageId;
    row.leaseReceiveCount = messageId === undefined ? undefined : receiveCount;
    delete row.nextAttemptAt;
    this.tables.slices.set(id, row);
    return { won: true, slice: toSlice(row) };
  }

  async skipClaimed({ key, fence }: FencedClaim, reason: string, now: number, status: NotRunStatus = SliceStatus.Skipped): Promise<void> {
    const row = this.row(key);
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    skipRow(row, reason, now, this.tables.expiresAtSeconds(now));
    row.status = status;
  }

  /** RENEW: `holdsLease`; effect leaseExpiresAt = now + leaseMs, and the message-back change. */
  async renew({ key, fence }: FencedClaim, now: number, leaseMs: number, messageBack?: MessageBackChange): Promise<void> {
    const row = this.row(key);
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.leaseExpiresAt = now + leaseMs;
    if (messageBack === 'disarm') delete row.leaseMessageId;
    else if (messageBack !== undefined) row.leaseMessageId = messageBack.rearm;
  }

  async commit({ key, fence, owner }: Claim, now: number, writes: readonly BusinessWrite[]): Promise<void> {
    if (writes.length > MAX_BUSINESS_WRITES_PER_COMMIT) {
      throw new TooManyWritesError(executionKey(key.jobId, key.scheduledAt), writes.length, MAX_BUSINESS_WRITES_PER_COMMIT);
    }
    this.finalize({ key, fence, owner, now, outcome: 'SUCCEEDED', writes });
  }

  /** FAIL: `holdsLease`; effect FAILED with the retry's time, the lease dropped. */
  async recordFailure(
    { key, fence }: FencedClaim,
    failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number },
  ): Promise<void> {
    const row = this.row(key);
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.status = SliceStatus.Failed;
    row.nextAttemptAt = failure.nextAttemptAt;
    row.lastError = failure.error.slice(0, MAX_ERROR_CHARS);
    row.sweepShard = row.shard;
    row.sweepAt = failure.sweepAt;
    row.finishedAt = failure.now;
    delete row.leaseExpiresAt;
  }

  async recordDead({ key, fence, owner }: Claim, now: number, error: string): Promise<void> {
    this.finalize({ key, fence, owner, now, outcome: 'DEAD', error: error.slice(0, MAX_ERROR_CHARS) });
  }

  async get(key: SliceKey): Promise<Slice | undefined> {
    const row = this.row(key);
    return row === undefined ? undefined : toSlice(row);
  }

  /** The sweep index: live slices of the shard with sweepAt in [0, now], earliest first. */
  async findSweepable(shard: number, now: number, limit: number): Promise<SweepCandidate[]> {
    return this.sweepIndex(shard, 0, now, limit);
  }

  /** DEFER SWEEP: `mayDeferSweep`; a lost race is nothing to do. */
  async deferSweep(candidate: SweepCandidate, sweepAt: number): Promise<void> {
    const row = this.row(candidate);
    if (row !== undefined && mayDeferSweep(row.sweepAt, candidate.sweepAt)) row.sweepAt = sweepAt;
  }

  async getLedger(key: SliceKey): Promise<LedgerRecord | undefined> {
    const row = this.row(key);
    return ledgerRecordOf(row === undefined ? undefined : toSlice(row));
  }

  async between(jobId: string, fromMs: number, toMs: number): Promise<Slice[]> {
    const rows = [...this.tables.slices.values()].filter(
      (row) => row.jobId === jobId && row.scheduledAt >= fromMs && row.scheduledAt < toMs,
    );
    return rows.sort((a, b) => a.scheduledAt - b.scheduledAt).map(toSlice);
  }

  /** ENQUEUE (create-slices.ts): `mayCreateSlice`; ENQUEUED in the sweep index, the fence kept. */
  async enqueue(run: SliceDefinition, slices: readonly NewSlice[], now: number): Promise<SliceKey[]> {
    const created: SliceKey[] = [];
    for (const slice of slices) {
      const previous = this.row(slice);
      if (!mayCreateSlice(previous, run.generation)) continue;
      this.tables.slices.set(sliceId(slice), {
        ...this.createdRow(slice, run, now, previous),
        sweepShard: run.shard,
        sweepAt: slice.sweepAt,
      });
      created.push({ jobId: slice.jobId, scheduledAt: slice.scheduledAt });
    }
    return created;
  }

  /** FOLLOW (reconcile-ops.ts): still RUNNING on `fence` and out of the sweep index. */
  async followAbandoned({ key, fence }: FencedClaim, sweepAt: number): Promise<boolean> {
    const row = this.row(key);
    if (!holdsLease(row, fence) || row.sweepAt !== undefined) return false;
    row.sweepShard = row.shard;
    row.sweepAt = sweepAt;
    return true;
  }

  /** RANGE (create-slices.ts): `mayCreateSlice`; final, out of the sweep index; a refusal judged by `rangeRecordOutcome`. */
  async recordRange(jobId: string, run: SliceDefinition, range: MissedRange | SkippedRange, now: number): Promise<RangeRecordOutcome> {
    const key = { jobId, scheduledAt: range.from };
    const previous = this.row(key);
    if (!mayCreateSlice(previous, run.generation)) return rangeRecordOutcome(previous, run.generation);
    const status = 'reason' in range ? { status: SliceStatus.Skipped, skipReason: range.reason } : { status: SliceStatus.Missed };
    const { payload: _payload, ...row } = this.createdRow(key, run, now, previous);
    this.tables.slices.set(sliceId(key), { ...row, ...status, missedUntil: range.to, missedCount: range.count, finishedAt: now });
    return { outcome: 'written' };
  }

  /** SETTLE (create-slices.ts): `mayCreateSlice`; SKIPPED with the change's reason, in history for the retention. */
  async settleAbsent(jobId: string, run: SliceDefinition, instants: readonly number[], reason: SkipReason, now: number): Promise<number> {
    let written = 0;
    for (const scheduledAt of instants) {
      const key = { jobId, scheduledAt };
      const previous = this.row(key);
      if (!mayCreateSlice(previous, run.generation)) continue;
      this.tables.slices.set(sliceId(key), {
        ...this.createdRow(key, run, now, previous),
        status: SliceStatus.Skipped,
        skipReason: reason,
        finishedAt: now,
        expiresAt: this.tables.expiresAtSeconds(now),
      });
      written++;
    }
    return written;
  }

  /** A new slice of `run`'s generation, ENQUEUED and out of the sweep index; the fence kept (it only ever grows). */
  private createdRow(key: SliceKey, run: SliceDefinition, now: number, previous: SliceRow | undefined): SliceRow {
    return {
      jobId: key.jobId,
      scheduledAt: key.scheduledAt,
      status: SliceStatus.Enqueued,
      fence: previous?.fence ?? 0,
      attempts: 0,
      generation: run.generation,
      handler: run.handler,
      policies: structuredClone(run.policies),
      payload: run.payload === undefined ? undefined : structuredClone(run.payload),
      shard: run.shard,
      leaseMs: run.policies.leaseMs,
      createdAt: now,
      claimToken: previous?.claimToken,
    };
  }

  /**
   * FINALIZE: the slice `mayFinalize`, then the slice (its ledger record) and
   * the user's writes, all or nothing; a refusal is judged by `finalizeRefusal`.
   */
  private finalize(request: FinalizeRequest): void {
    const { key, fence, owner, now, outcome } = request;
    const id = executionKey(key.jobId, key.scheduledAt);
    const applyWrites = planBusinessWrites(this.tables, id, request.writes ?? []);
    const row = this.row(key);
    if (!mayFinalize(row, fence, owner)) {
      const refusal = finalizeRefusal(ledgerRecordOf(row === undefined ? undefined : toSlice(row)), request, id);
      if (refusal === undefined) return;
      throw refusal;
    }
    row.status = outcome === 'SUCCEEDED' ? SliceStatus.Succeeded : SliceStatus.Dead;
    row.finishedAt = now;
    if (request.error !== undefined) row.lastError = request.error;
    delete row.sweepShard;
    delete row.sweepAt;
    delete row.leaseExpiresAt;
    delete row.expiresAt;
    applyWrites();
  }

  private sweepIndex(shard: number, fromMs: number, toMs: number, limit: number): SweepCandidate[] {
    const found: SweepCandidate[] = [];
    for (const row of this.tables.slices.values()) {
      if (row.sweepShard !== shard || row.sweepAt === undefined || row.sweepAt < fromMs || row.sweepAt > toMs) continue;
      found.push({ jobId: row.jobId, scheduledAt: row.scheduledAt, sweepAt: row.sweepAt });
    }
    return found.sort((a, b) => a.sweepAt - b.sweepAt).slice(0, limit);
  }

  private row(key: SliceKey): SliceRow | undefined {
    return this.tables.slices.get(sliceId(key));
  }
}

/** SKIP (skip-slice.ts): SKIPPED with `reason`, out of the sweep index, the lease dropped. */
export function skipRow(row: SliceRow, reason: string, now: number, expiresAt?: number): void {
  row.status = SliceStatus.Skipped;
  row.skipReason = reason;
  row.finishedAt = now;
  if (expiresAt !== undefined) row.expiresAt = expiresAt;
  delete row.sweepShard;
  delete row.sweepAt;
  dropLease(row);
}

/** What a run leaves on the slice that a skipped or waiting slice must not carry. */
export function dropLease(row: SliceRow): void {
  delete row.leaseExpiresAt;
  delete row.leaseMessageId;
  delete row.leaseReceiveCount;
  delete row.owner;
}
