/**
 * The overlap policy's operations (core/overlap-policy.ts), each one request:
 *
 * RECENT     Query slices[jobId, scheduledAt <= until], newest first, Limit n,
 *            consistent: the runs a just-claimed occurrence judges overlap by.
 * SKIP       Key slices[jobId, T]; Condition: HELD (fence = mine AND RUNNING);
 *            Effect: SKIPPED, skipReason, finishedAt, history TTL, out of the
 *            sweep index, the lease dropped. Outcome: done, or LeaseLostError.
 * DEFER      Key slices[jobId, T]; Condition: HELD; Effect: ENQUEUED,
 *            attempts - 1 (a wait is not an attempt), bufferedAt on the first
 *            wait, sweepAt (the sweep re-sends it if its message is lost), the
 *            lease dropped; the fence is kept (it only grows). Outcome: done,
 *            or LeaseLostError.
 * FENCE OUT  Key slices[jobId, T'] of the run replaced; Condition: HELD by
 *            that run's fence; Effect: SKIPPED `replaced`, fence + 1 (its
 *            renewal and commit now fail), out of the sweep index. Outcome:
 *            true, or false when that run had finished or moved on.
 */
import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LeaseLostError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { OverlapStore } from '../../core/ports.ts';
import { SliceStatus, type Slice, type SliceKey } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { conditionalUpdate, onTable } from './errors.ts';
import { sliceKeyItem, toSlice } from './items.ts';

/** The claim being acted on still holds the slice. */
const HELD = 'fence = :fence AND #status = :running';
/** What a run leaves on the slice that a skipped or waiting slice must not carry. */
const LEASE_FIELDS = 'leaseExpiresAt, leaseMessageId, leaseReceiveCount, #owner';

export class DynamoOverlapStore implements OverlapStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable' | 'sliceRetentionMs'>,
  ) {}

  async recentSlices(jobId: string, untilMs: number, limit: number): Promise<Slice[]> {
    const result = await onTable(this.config.slicesTable, () =>
      this.dynamo.send(
        new QueryCommand({
          TableName: this.config.slicesTable,
          KeyConditionExpression: 'jobId = :job AND scheduledAt <= :until',
          ExpressionAttributeValues: { ':job': { S: jobId }, ':until': { N: String(untilMs) } },
          ScanIndexForward: false,
          Limit: limit,
          ConsistentRead: true,
        }),
      ),
    );
    return (result.Items ?? []).map(toSlice);
  }

  async skipClaimed(key: SliceKey, fence: number, reason: string, now: number): Promise<void> {
    await this.settleSkipped(key, fence, reason, now, false, () => {
      throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    });
  }

  async deferClaimed(key: SliceKey, fence: number, now: number, sweepAt: number): Promise<void> {
    await conditionalUpdate(
      this.dynamo,
      {
        TableName: this.config.slicesTable,
        Key: sliceKeyItem(key),
        UpdateExpression: `SET #status = :enqueued, attempts = attempts - :one, bufferedAt = if_not_exists(bufferedAt, :now), sweepAt = :sweep REMOVE ${LEASE_FIELDS}`,
        ConditionExpression: HELD,
        ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':enqueued': { S: SliceStatus.Enqueued },
          ':running': { S: SliceStatus.Running },
          ':fence': { N: String(fence) },
          ':one': { N: '1' },
          ':now': { N: String(now) },
          ':sweep': { N: String(sweepAt) },
        },
      },
      (error) => {
        throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence, { cause: error });
      },
    );
  }

  fenceOut(key: SliceKey, fence: number, now: number): Promise<boolean> {
    return this.settleSkipped(key, fence, 'replaced', now, true, () => {});
  }

  private settleSkipped(key: SliceKey, fence: number, reason: string, now: number, bumpFence: boolean, onLost: () => void): Promise<boolean> {
    return conditionalUpdate(
      this.dynamo,
      {
        TableName: this.config.slicesTable,
        Key: sliceKeyItem(key),
        UpdateExpression:
          `SET #status = :skipped, skipReason = :reason, finishedAt = :now, expiresAt = :expires${bumpFence ? ', fence = fence + :one' : ''}` +
          ` REMOVE sweepShard, sweepAt, ${LEASE_FIELDS}`,
        ConditionExpression: HELD,
        ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':skipped': { S: SliceStatus.Skipped },
          ':running': { S: SliceStatus.Running },
          ':reason': { S: reason },
          ':fence': { N: String(fence) },
          ':now': { N: String(now) },
          ':expires': { N: String(Math.floor((now + this.config.sliceRetentionMs) / 1000)) },
          ...(bumpFence ? { ':one': { N: '1' } } : {}),
        },
      },
      onLost,
    );
  }
}
