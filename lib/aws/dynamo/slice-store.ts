/**
 * The SliceStore port over DynamoDB: each method is one atomic operation,
 * documented in its own file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Claim, FencedClaim } from '../../core/claim.ts';
import type { MissedRange, SkippedRange } from '../../core/advance-plan.ts';
import { LeaseLostError, TooManyWritesError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { SkipReason } from '../../core/job-record.ts';
import { ledgerRecordOf, type LedgerRecord } from '../../core/ledger.ts';
import { mapBounded } from '../../core/map-bounded.ts';
import type {
  BusinessWrite,
  ClaimOutcome,
  MessageBackChange,
  NewSlice,
  NotRunStatus,
  RangeRecordOutcome,
  SliceStore,
  SweepCandidate,
} from '../../core/ports.ts';
import { SliceStatus, type Slice, type SliceDefinition, type SliceKey } from '../../core/slice.ts';
import { MAX_BUSINESS_WRITES_PER_COMMIT } from '../../core/slice-transitions.ts';
import type { CronfenceConfig } from '../config.ts';
import { toTransactItem } from './business-writes.ts';
import { claimSlice, readSlice } from './claim-slice.ts';
import { enqueueSlice, recordRange, settleAbsentSlice } from './create-slices.ts';
import { finalizeSlice } from './finalize-slice.ts';
import { followAbandoned, slicesBetween } from './reconcile-ops.ts';
import { recordFailure } from './record-failure.ts';
import { renewLease } from './renew-lease.ts';
import { skipHeldSlice } from './skip-slice.ts';
import { deferSweep, querySweepIndex } from './sweep.ts';

/** Conditional writes of one call sent at once. */
const WRITE_CONCURRENCY = 8;

export class DynamoSliceStore implements SliceStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable' | 'sliceRetentionMs'>,
  ) {}

  claim(
    key: SliceKey,
    owner: string,
    now: number,
    messageId?: string,
    receiveCount?: number,
    run?: SliceDefinition,
  ): Promise<ClaimOutcome> {
    return claimSlice(this.dynamo, this.config.slicesTable, {
      key: { jobId: key.jobId, scheduledAt: key.scheduledAt },
      owner,
      now,
      messageId,
      receiveCount,
      run,
    });
  }

  async skipClaimed({ key, fence }: FencedClaim, reason: string, now: number, status: NotRunStatus = SliceStatus.Skipped): Promise<void> {
    await skipHeldSlice(this.dynamo, this.config, { key, fence, reason, now, bumpFence: false, status }, () => {
      throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    });
  }

  renew({ key, fence }: FencedClaim, now: number, leaseMs: number, messageBack?: MessageBackChange): Promise<void> {
    return renewLease(this.dynamo, this.config.slicesTable, key, fence, now, leaseMs, messageBack);
  }

  async commit({ key, fence, owner }: Claim, now: number, writes: readonly BusinessWrite[]): Promise<void> {
    if (writes.length > MAX_BUSINESS_WRITES_PER_COMMIT) {
      throw new TooManyWritesError(executionKey(key.jobId, key.scheduledAt), writes.length, MAX_BUSINESS_WRITES_PER_COMMIT);
    }
    await finalizeSlice(this.dynamo, this.config.slicesTable, {
      key,
      fence,
      owner,
      now,
      outcome: 'SUCCEEDED',
      extraWrites: writes.map(toTransactItem),
    });
  }

  recordFailure(
    { key, fence }: FencedClaim,
    failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number },
  ): Promise<void> {
    return recordFailure(this.dynamo, this.config.slicesTable, key, fence, failure);
  }

  recordDead({ key, fence, owner }: Claim, now: number, error: string): Promise<void> {
    return finalizeSlice(this.dynamo, this.config.slicesTable, { key, fence, owner, now, outcome: 'DEAD', error: error.slice(0, 2000) });
  }

  get(key: SliceKey): Promise<Slice | undefined> {
    return readSlice(this.dynamo, this.config.slicesTable, key);
  }

  findSweepable(shard: number, now: number, limit: number): Promise<SweepCandidate[]> {
    return querySweepIndex(this.dynamo, this.config.slicesTable, shard, 0, now, limit);
  }

  deferSweep(candidate: SweepCandidate, sweepAt: number): Promise<void> {
    return deferSweep(this.dynamo, this.config.slicesTable, candidate, sweepAt);
  }

  async getLedger(key: SliceKey): Promise<LedgerRecord | undefined> {
    return ledgerRecordOf(await readSlice(this.dynamo, this.config.slicesTable, key));
  }

  between(jobId: string, fromMs: number, toMs: number): Promise<Slice[]> {
    return slicesBetween(this.dynamo, this.config.slicesTable, jobId, fromMs, toMs);
  }

  async enqueue(run: SliceDefinition, slices: readonly NewSlice[], now: number): Promise<SliceKey[]> {
    const created = await mapBounded(slices, WRITE_CONCURRENCY, async (slice) =>
      (await enqueueSlice(this.dynamo, this.config, run, slice, now)) ? slice : undefined,
    );
    return created.flatMap((slice) => (slice ? [{ jobId: slice.jobId, scheduledAt: slice.scheduledAt }] : []));
  }

  followAbandoned({ key, fence }: FencedClaim, sweepAt: number): Promise<boolean> {
    return followAbandoned(this.dynamo, this.config.slicesTable, key, fence, sweepAt);
  }

  recordRange(jobId: string, run: SliceDefinition, range: MissedRange | SkippedRange, now: number): Promise<RangeRecordOutcome> {
    return recordRange(this.dynamo, this.config, jobId, run, range, now);
  }

  async settleAbsent(jobId: string, run: SliceDefinition, instants: readonly number[], reason: SkipReason, now: number): Promise<number> {
    const written = await mapBounded(instants, WRITE_CONCURRENCY, (scheduledAt) =>
      settleAbsentSlice(this.dynamo, this.config, { jobId, scheduledAt }, run, reason, now),
    );
    return written.filter(Boolean).length;
  }
}
