/**
 * SETTLE PENDING — after a job changed (put, pause, resume, delete), its
 * slices of older generations that have not started will not run.
 *
 * Find:      slices[jobId] scheduled in the last RECENT_MS or later, read
 *            consistently (a slice the scanner created just before the change
 *            is seen); older ones from the sweep index (only live slices are
 *            in it, and anything that old has long reached the index; it does
 *            not project the status, so each is tried and the condition judges).
 * Per slice: condition status IN (ENQUEUED, FAILED) AND generation < the new
 *            one (`maySettle`, core/slice-transitions.ts): a slice already
 *            claimed runs to its end; one the scanner re-created for the new
 *            generation stays
 *            effect status = SKIPPED, skipReason, finishedAt, history TTL;
 *            leaves the sweep index.
 * Outcome:   how many were skipped (a skip whose first try landed unanswered and
 *            was sent again counts once: the slice shows this request's own skip).
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SkipReason } from '../../core/job-record.ts';
import { SliceStatus } from '../../core/slice.ts';
import { conditionalUpdate } from './errors.ts';
import { queryAll } from './read-pages.ts';
import { SWEEP_INDEX } from './sweep.ts';

/** Slices scheduled this recently are found on the table itself, read consistently. */
const RECENT_MS = 3_600_000;

export interface SettleRequest {
  readonly jobId: string;
  readonly shard: number;
  /** Slices of generations below this one are settled. */
  readonly generation: number;
  readonly reason: SkipReason;
  readonly now: number;
  readonly retentionMs: number;
}

const PENDING = { ':enqueued': { S: SliceStatus.Enqueued }, ':failed': { S: SliceStatus.Failed } };

export async function settlePendingSlices(dynamo: DynamoDBClient, slicesTable: string, request: SettleRequest): Promise<number> {
  const recentFrom = request.now - RECENT_MS;
  const recent = await queryAll(dynamo, {
    TableName: slicesTable,
    KeyConditionExpression: 'jobId = :job AND scheduledAt >= :from',
    FilterExpression: '#status IN (:enqueued, :failed)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':job': { S: request.jobId }, ':from': { N: String(recentFrom) }, ...PENDING },
    ProjectionExpression: 'jobId, scheduledAt',
    ConsistentRead: true,
  });
  const older = await queryAll(dynamo, {
    TableName: slicesTable,
    IndexName: SWEEP_INDEX,
    KeyConditionExpression: 'sweepShard = :shard',
    FilterExpression: 'jobId = :job AND scheduledAt < :from',
    ExpressionAttributeValues: {
      ':shard': { N: String(request.shard) },
      ':job': { S: request.jobId },
      ':from': { N: String(recentFrom) },
    },
  });
  let skipped = 0;
  for (const item of [...older, ...recent]) {
    if (await skipOne(dynamo, slicesTable, item, request)) skipped++;
  }
  return skipped;
}

async function skipOne(
  dynamo: DynamoDBClient,
  slicesTable: string,
  key: Record<string, AttributeValue>,
  request: SettleRequest,
): Promise<boolean> {
  let ownSkipResent = false;
  const skipped = await conditionalUpdate(
    dynamo,
    {
      TableName: slicesTable,
      Key: { jobId: key.jobId!, scheduledAt: key.scheduledAt! },
      UpdateExpression: 'SET #status = :skipped, skipReason = :reason, finishedAt = :now, expiresAt = :expires REMOVE sweepShard, sweepAt',
      ConditionExpression: '#status IN (:enqueued, :failed) AND (attribute_not_exists(generation) OR generation < :generation)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':skipped': { S: SliceStatus.Skipped },
        ':reason': { S: request.reason },
        ':generation': { N: String(request.generation) },
        ':now': { N: String(request.now) },
        ':expires': { N: String(Math.floor((request.now + request.retentionMs) / 1000)) },
        ...PENDING,
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
    // Claimed, final, or re-created for the new generation meanwhile: not ours to skip. Unless it shows this very
    // skip: the SDK sent the update again after its first try landed unanswered (a timeout), and it was ours.
    (error) => {
      const old = error.Item;
      ownSkipResent =
        old?.status?.S === SliceStatus.Skipped && old.skipReason?.S === request.reason && old.finishedAt?.N === String(request.now);
    },
  );
  return skipped || ownSkipResent;
}
