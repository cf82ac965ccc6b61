/**
 * FAIL — an attempt failed and another is allowed.
 *
 * Key:       slices[jobId, scheduledAt]
 * Condition: fence = mine AND status = RUNNING (`holdsLease`, core/slice-transitions.ts)
 * Effect:    status = FAILED, nextAttemptAt (backoff), lastError,
 *            sweepShard = shard and sweepAt = nextAttemptAt + grace (into the sweep
 *            index: the retry waits on its message); the lease is dropped
 * Outcome:   recorded, or LeaseLostError (a standby owns it now).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LeaseLostError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import { conditionalUpdate } from './errors.ts';
import { sliceKeyItem } from './items.ts';

export interface FailureRecord {
  readonly now: number;
  readonly error: string;
  readonly nextAttemptAt: number;
  readonly sweepAt: number;
}

export async function recordFailure(
  dynamo: DynamoDBClient,
  tableName: string,
  key: SliceKey,
  fence: number,
  failure: FailureRecord,
): Promise<void> {
  await conditionalUpdate(
    dynamo,
    {
      TableName: tableName,
      Key: sliceKeyItem(key),
      UpdateExpression:
        'SET #status = :failed, nextAttemptAt = :next, lastError = :error, sweepShard = #shard, sweepAt = :sweep, finishedAt = :now REMOVE leaseExpiresAt',
      ConditionExpression: 'fence = :fence AND #status = :running',
      ExpressionAttributeNames: { '#status': 'status', '#shard': 'shard' },
      ExpressionAttributeValues: {
        ':failed': { S: SliceStatus.Failed },
        ':running': { S: SliceStatus.Running },
        ':next': { N: String(failure.nextAttemptAt) },
        ':error': { S: failure.error.slice(0, 2000) },
        ':sweep': { N: String(failure.sweepAt) },
        ':now': { N: String(failure.now) },
        ':fence': { N: String(fence) },
      },
    },
    (error) => {
      throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence, { cause: error });
    },
  );
}
