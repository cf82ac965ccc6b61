/**
 * The reconciler's two operations on the slices table (lib/engine/reconciler.ts).
 *
 * BETWEEN  Query slices[jobId, scheduledAt in [from, to)], eventually
 *          consistent: a slice a claim created a moment ago may not show
 *          yet, and then it is only sent again (a duplicate the claim drops).
 * FOLLOW   Key slices[jobId, T]; Condition: ABANDONED_HOLDER (RUNNING, the
 *          fence the reconciler read, not in the sweep index); Effect:
 *          sweepShard = shard, sweepAt: the sweep follows it from now on.
 *          Outcome: true; false when it moved on meanwhile (nothing to do).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SliceStatus, type Slice, type SliceKey } from '../../core/slice.ts';
import { conditionalUpdate, onTable } from './errors.ts';
import { sliceKeyItem, toSlice } from './items.ts';
import { queryAll } from './read-pages.ts';

/** Still the run the reconciler found abandoned, and nothing follows it yet. */
const ABANDONED_HOLDER = '#status = :running AND fence = :fence AND attribute_not_exists(sweepAt)';

export async function slicesBetween(
  dynamo: DynamoDBClient,
  tableName: string,
  jobId: string,
  fromMs: number,
  toMs: number,
): Promise<Slice[]> {
  // An empty range holds nothing; DynamoDB rejects a BETWEEN whose upper bound is below its lower one (ValidationException).
  if (fromMs >= toMs) return [];
  const items = await onTable(tableName, () =>
    queryAll(dynamo, {
      TableName: tableName,
      KeyConditionExpression: 'jobId = :job AND scheduledAt BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':job': { S: jobId }, ':from': { N: String(fromMs) }, ':to': { N: String(toMs - 1) } },
    }),
  );
  return items.map(toSlice);
}

export function followAbandoned(
  dynamo: DynamoDBClient,
  tableName: string,
  key: SliceKey,
  fence: number,
  sweepAt: number,
): Promise<boolean> {
  return conditionalUpdate(
    dynamo,
    {
      TableName: tableName,
      Key: sliceKeyItem(key),
      UpdateExpression: 'SET sweepShard = #shard, sweepAt = :sweep',
      ConditionExpression: ABANDONED_HOLDER,
      ExpressionAttributeNames: { '#status': 'status', '#shard': 'shard' },
      ExpressionAttributeValues: {
        ':running': { S: SliceStatus.Running },
        ':fence': { N: String(fence) },
        ':sweep': { N: String(sweepAt) },
      },
    },
    () => {},
  );
}
