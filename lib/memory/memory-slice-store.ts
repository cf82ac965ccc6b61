/**
 * The SliceStore port in memory. Each method is the operation of the same
 * name in lib/aws/dynamo (claim-slice.ts, renew-lease.ts, record-failure.ts,
 * finalize-slice.ts, sweep.ts): the same condition, taken from the pure rules
 * in lib/core (isClaimable, slice-transitions.ts), and the same effect on the
 * same attributes. test/contract runs one suite against both.
 */
import { randomUUID } from 'node:crypto';
import { FencedOutError, LeaseLostError, OutcomeOnRecordError, TooManyWritesError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { ledgerRecordOf, type LedgerOutcome, type LedgerRecord } from '../core/ledger.ts';
import type { BusinessWrite, ClaimOutcome, SliceStore, SweepCandidate } from '../core/ports.ts';
import { isClaimable, SliceStatus, type Slice, type SliceKey } from '../core/slice.ts';
import {
  holdsLease,
  MAX_BUSINESS_WRITES_PER_COMMIT,
  MAX_ERROR_CHARS,
  mayDeferSweep,
  mayFinalize,
  refusedFinalize,
} from '../core/slice-transitions.ts';
import { planBusinessWrites } from './memory-business-writes.ts';
import { sliceId, toSlice, type MemoryTables, type SliceRow } from './memory-tables.ts';

interface FinalizeRequest {
  readonly key: SliceKey;
  readonly fence: number;
  readonly owner: string;
  readonly now: number;
  readonly outcome: LedgerOutcome;
  readonly error?: string;
  readonly writes?: readonly BusinessWrite[];
}

export class InMemorySliceStore implements SliceStore {
  constructor(private readonly tables: MemoryTables) {}

  /** CLAIM: the condition is `isClaimable` (and the slice exists); effect as claim-slice.ts. */
  async claim(key: SliceKey, owner: string, now: number, messageId?: string, receiveCount?: number): Promise<ClaimOutcome> {
    const token = randomUUID();
    const row = this.row(key);
    if (row === undefined) return { won: false, current: undefined };
    // One call is one request here, so a resent request (isOwnClaimResent) cannot occur.
    if (!isClaimable(row, now, messageId, token, receiveCount)) return { won: false, current: toSlice(row) };
    row.claimedFrom = row.status;
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
    return { won: true, slice: toSlice(row) };
  }

  /** RENEW: `holdsLease`; effect leaseExpiresAt = now + leaseMs. */
  async renew(key: SliceKey, fence: number, now: number, leaseMs: number, disarmMessageBack = false): Promise<void> {
    const row = this.row(key);
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.leaseExpiresAt = now + leaseMs;
    if (disarmMessageBack) delete row.leaseMessageId;
  }

  async commit(key: SliceKey, fence: number, owner: string, now: number, writes: readonly BusinessWrite[]): Promise<void> {
    if (writes.length > MAX_BUSINESS_WRITES_PER_COMMIT) {
      throw new TooManyWritesError(executionKey(key.jobId, key.scheduledAt), writes.length, MAX_BUSINESS_WRITES_PER_COMMIT);
    }
    this.finalize({ key, fence, owner, now, outcome: 'SUCCEEDED', writes });
  }

  /** FAIL: `holdsLease`; effect FAILED with the retry's time, the lease dropped. */
  async recordFailure(key: SliceKey, fence: number, failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number }): Promise<void> {
    const row = this.row(key);
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.status = SliceStatus.Failed;
    row.nextAttemptAt = failure.nextAttemptAt;
    row.lastError = failure.error.slice(0, MAX_ERROR_CHARS);
    row.sweepAt = failure.sweepAt;
    row.finishedAt = failure.now;
    delete row.leaseExpiresAt;
  }

  async recordDead(key: SliceKey, fence: number, owner: string, now: number, error: string): Promise<void> {
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

  async findCreatedByScan(shard: number, scanId: string, fromMs: number, toMs: number, limit: number): Promise<SweepCandidate[]> {
    return this.sweepIndex(shard, fromMs, toMs - 1, limit, scanId);
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

  /**
   * FINALIZE: the slice `mayFinalize`, then the slice (its ledger record) and
   * the user's writes, all or nothing; a refusal is judged by `refusedFinalize`.
   */
  private finalize(request: FinalizeRequest): void {
    const { key, fence, owner, now, outcome } = request;
    const id = executionKey(key.jobId, key.scheduledAt);
    const applyWrites = planBusinessWrites(this.tables, id, request.writes ?? []);
    const row = this.row(key);
    if (!mayFinalize(row, fence, owner)) {
      const ledger = ledgerRecordOf(row === undefined ? undefined : toSlice(row));
      const refusal = refusedFinalize(ledger, fence, owner, outcome);
      if (refusal === 'own-earlier-try') return;
      if (refusal === 'other-outcome-on-record' && ledger !== undefined) throw new OutcomeOnRecordError(id, ledger.outcome);
      throw new FencedOutError(id, fence);
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

  private sweepIndex(shard: number, fromMs: number, toMs: number, limit: number, scanId?: string): SweepCandidate[] {
    const found: SweepCandidate[] = [];
    for (const row of this.tables.slices.values()) {
      if (row.sweepShard !== shard || row.sweepAt === undefined || row.sweepAt < fromMs || row.sweepAt > toMs) continue;
      if (scanId !== undefined && row.scanId !== scanId) continue;
      found.push({ jobId: row.jobId, scheduledAt: row.scheduledAt, sweepAt: row.sweepAt });
    }
    return found.sort((a, b) => a.sweepAt - b.sweepAt).slice(0, limit);
  }

  private row(key: SliceKey): SliceRow | undefined {
    return this.tables.slices.get(sliceId(key));
  }
}
