/**
 * The SliceStore port over DynamoDB: each method is one atomic operation,
 * documented in its own file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { TooManyWritesError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import { ledgerRecordOf, type LedgerRecord } from '../../core/ledger.ts';
import type { BusinessWrite, ClaimOutcome, SliceStore, SweepCandidate } from '../../core/ports.ts';
import type { Slice, SliceKey } from '../../core/slice.ts';
import { MAX_BUSINESS_WRITES_PER_COMMIT } from '../../core/slice-transitions.ts';
import type { CronfenceConfig } from '../config.ts';
import { toTransactItem } from './business-writes.ts';
import { claimSlice, readSlice } from './claim-slice.ts';
import { finalizeSlice } from './finalize-slice.ts';
import { recordFailure } from './record-failure.ts';
import { renewLease } from './renew-lease.ts';
import { deferSweep, querySweepIndex } from './sweep.ts';

export class DynamoSliceStore implements SliceStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable'>,
  ) {}

  claim(key: SliceKey, owner: string, now: number, messageId?: string, receiveCount?: number): Promise<ClaimOutcome> {
    return claimSlice(this.dynamo, this.config.slicesTable, key, owner, now, messageId, receiveCount);
  }

  renew(key: SliceKey, fence: number, now: number, leaseMs: number, disarmMessageBack = false): Promise<void> {
    return renewLease(this.dynamo, this.config.slicesTable, key, fence, now, leaseMs, disarmMessageBack);
  }

  async commit(key: SliceKey, fence: number, owner: string, now: number, writes: readonly BusinessWrite[]): Promise<void> {
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

  recordFailure(key: SliceKey, fence: number, failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number }): Promise<void> {
    return recordFailure(this.dynamo, this.config.slicesTable, key, fence, failure);
  }

  recordDead(key: SliceKey, fence: number, owner: string, now: number, error: string): Promise<void> {
    return finalizeSlice(this.dynamo, this.config.slicesTable, { key, fence, owner, now, outcome: 'DEAD', error: error.slice(0, 2000) });
  }

  get(key: SliceKey): Promise<Slice | undefined> {
    return readSlice(this.dynamo, this.config.slicesTable, key);
  }

  findSweepable(shard: number, now: number, limit: number): Promise<SweepCandidate[]> {
    return querySweepIndex(this.dynamo, this.config.slicesTable, shard, 0, now, limit);
  }

  findCreatedByScan(shard: number, scanId: string, fromMs: number, toMs: number, limit: number): Promise<SweepCandidate[]> {
    return querySweepIndex(this.dynamo, this.config.slicesTable, shard, fromMs, toMs - 1, limit, scanId);
  }

  deferSweep(candidate: SweepCandidate, sweepAt: number): Promise<void> {
    return deferSweep(this.dynamo, this.config.slicesTable, candidate, sweepAt);
  }

  async getLedger(key: SliceKey): Promise<LedgerRecord | undefined> {
    return ledgerRecordOf(await readSlice(this.dynamo, this.config.slicesTable, key));
  }
}
