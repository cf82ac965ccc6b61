/**
 * The overlap policy's operations (core/overlap-policy.ts), each one request:
 *
 * RECENT     Query slices[jobId, scheduledAt <= until], newest first, Limit n,
 *            consistent: the runs a just-claimed occurrence judges overlap by.
 * SKIP       skip-slice.ts (the slice store's: a superseded run is skipped the same way).
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
import { LEASE_FIELDS, skipHeldSlice } from './skip-slice.ts';
import { sliceKeyItem, toSlice } from './items.ts';

/** The claim being acted on still holds the slice. */
const HELD = 'fence = :fence AND #status = :running';

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

  async deferClaimed(key: SliceKey, fence: number, now: number, sweepAt: number): Promise<void> {
    await conditionalUpdate(
      this.dynamo,
      {
        TableName: this.config.slicesTable,
        Key: sliceKeyItem(key),
        UpdateExpression: `SET #status = :enqueued, attempts = attempts - :one, bufferedAt = if_not_exists(bufferedAt, :now), sweepShard = #shard, sweepAt = :sweep REMOVE ${LEASE_FIELDS}`,
        ConditionExpression: HELD,
        ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner', '#shard': 'shard' },
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
    return skipHeldSlice(this.dynamo, this.config, { key, fence, reason: 'replaced', now, bumpFence: true }, () => {});
  }
}
