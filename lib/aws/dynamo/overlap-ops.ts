/**
 * The overlap policy's operations (core/overlap-policy.ts), each one request:
 *
 * LANE       GetItem slices[jobId, LANE_INSTANT], consistent: the job's lane
 *            (laneRunAt, laneVersion). Its sort key is below every occurrence
 *            and every trigger marker (core/operator.ts), so no read of a
 *            job's history or of a time range meets it.
 * TAKE       Key slices[jobId, LANE_INSTANT]; Condition: laneVersion = the
 *            one read (attribute_not_exists(jobId) when there was none);
 *            Effect: laneRunAt = the run's slot, laneVersion + 1, TTL as a
 *            final slice's. Outcome: true, or false when another take came first.
 * LINE       Query slices[jobId, after < scheduledAt < before], oldest first,
 *            Limit n, filter status ENQUEUED or RUNNING, consistent: the first
 *            waiting in line. Limit bounds the slices read, not those returned.
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
import { GetItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { FencedClaim } from '../../core/claim.ts';
import { LeaseLostError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { OverlapLane } from '../../core/overlap-policy.ts';
import type { OverlapStore } from '../../core/ports.ts';
import { SliceStatus, type Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { conditionalUpdate, onTable } from './errors.ts';
import { LEASE_FIELDS, skipHeldSlice } from './skip-slice.ts';
import { fromItem, sliceKeyItem, toSlice } from './items.ts';

/** The lane item's sort key: below the trigger markers' range (-2^48 to -1) and every occurrence. */
export const LANE_INSTANT = -(2 ** 50);

/** The claim being acted on still holds the slice. */
const HELD = 'fence = :fence AND #status = :running';

export class DynamoOverlapStore implements OverlapStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable' | 'sliceRetentionMs'>,
  ) {}

  async lane(jobId: string): Promise<OverlapLane | undefined> {
    const result = await onTable(this.config.slicesTable, () =>
      this.dynamo.send(
        new GetItemCommand({
          TableName: this.config.slicesTable,
          Key: sliceKeyItem({ jobId, scheduledAt: LANE_INSTANT }),
          ConsistentRead: true,
        }),
      ),
    );
    if (!result.Item) return undefined;
    const raw = fromItem(result.Item);
    return { runAt: raw.laneRunAt as number, version: raw.laneVersion as number };
  }

  takeLane(jobId: string, seen: OverlapLane | undefined, runAt: number, now: number): Promise<boolean> {
    return conditionalUpdate(
      this.dynamo,
      {
        TableName: this.config.slicesTable,
        Key: sliceKeyItem({ jobId, scheduledAt: LANE_INSTANT }),
        UpdateExpression: 'SET laneRunAt = :run, laneVersion = :next, updatedAt = :now, expiresAt = :expires',
        ConditionExpression: seen ? 'laneVersion = :seen' : 'attribute_not_exists(jobId)',
        ExpressionAttributeValues: {
          ':run': { N: String(runAt) },
          ':next': { N: String((seen?.version ?? 0) + 1) },
          ':now': { N: String(now) },
          ':expires': { N: String(Math.ceil((now + this.config.sliceRetentionMs) / 1000)) },
          ...(seen && { ':seen': { N: String(seen.version) } }),
        },
      },
      () => {},
    );
  }

  async firstInLine(jobId: string, afterMs: number, beforeMs: number, limit: number): Promise<Slice | undefined> {
    if (beforeMs - afterMs < 2) return undefined;
    const result = await onTable(this.config.slicesTable, () =>
      this.dynamo.send(
        new QueryCommand({
          TableName: this.config.slicesTable,
          KeyConditionExpression: 'jobId = :job AND scheduledAt BETWEEN :from AND :to',
          FilterExpression: '#status IN (:enqueued, :running)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':job': { S: jobId },
            ':from': { N: String(afterMs + 1) },
            ':to': { N: String(beforeMs - 1) },
            ':enqueued': { S: SliceStatus.Enqueued },
            ':running': { S: SliceStatus.Running },
          },
          Limit: limit,
          ConsistentRead: true,
        }),
      ),
    );
    const first = result.Items?.[0];
    return first ? toSlice(first) : undefined;
  }

  async deferClaimed({ key, fence }: FencedClaim, now: number, sweepAt: number): Promise<void> {
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

  fenceOut({ key, fence }: FencedClaim, now: number): Promise<boolean> {
    return skipHeldSlice(this.dynamo, this.config, { key, fence, reason: 'replaced', now, bumpFence: true }, () => {});
  }
}
