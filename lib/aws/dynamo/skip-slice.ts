/**
 * SKIP — a claimed slice that will not run: its job moved on since its
 * message was sent (the worker's check after the claim), its overlap policy
 * skips it, or a newer run replaces it (`bumpFence`: its holder is fenced out).
 *
 * Key:       slices[jobId, T]
 * Condition: HELD (fence = the claim's AND RUNNING)
 * Effect:    SKIPPED (or MISSED: claimed past its catch-up window), skipReason, finishedAt, history TTL, out of the sweep
 *            index, the lease dropped; fence + 1 when fencing out.
 * Outcome:   done; or the claim no longer holds it (`onLost`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { conditionalUpdate } from './errors.ts';
import { sliceKeyItem } from './items.ts';

/** The claim being acted on still holds the slice. */
const HELD = 'fence = :fence AND #status = :running';
/** What a run leaves on the slice that a skipped or waiting slice must not carry. */
export const LEASE_FIELDS = 'leaseExpiresAt, leaseMessageId, leaseReceiveCount, #owner';

export interface SkipRequest {
  readonly key: SliceKey;
  readonly fence: number;
  readonly reason: string;
  readonly now: number;
  readonly bumpFence: boolean;
  /** @default SKIPPED; MISSED for a slot claimed past its catch-up window. */
  readonly status?: typeof SliceStatus.Skipped | typeof SliceStatus.Missed;
}

export function skipHeldSlice(
  dynamo: DynamoDBClient,
  config: Pick<CronfenceConfig, 'slicesTable' | 'sliceRetentionMs'>,
  request: SkipRequest,
  onLost: () => void,
): Promise<boolean> {
  const { key, fence, reason, now, bumpFence } = request;
  return conditionalUpdate(
    dynamo,
    {
      TableName: config.slicesTable,
      Key: sliceKeyItem(key),
      UpdateExpression:
        `SET #status = :skipped, skipReason = :reason, finishedAt = :now, expiresAt = :expires${bumpFence ? ', fence = fence + :one' : ''}` +
        ` REMOVE sweepShard, sweepAt, ${LEASE_FIELDS}`,
      ConditionExpression: HELD,
      ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
      ExpressionAttributeValues: {
        ':skipped': { S: request.status ?? SliceStatus.Skipped },
        ':running': { S: SliceStatus.Running },
        ':reason': { S: reason },
        ':fence': { N: String(fence) },
        ':now': { N: String(now) },
        ':expires': { N: String(Math.floor((now + config.sliceRetentionMs) / 1000)) },
        ...(bumpFence ? { ':one': { N: '1' } } : {}),
      },
    },
    onLost,
  );
}
