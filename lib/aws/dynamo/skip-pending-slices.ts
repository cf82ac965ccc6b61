/**
 * SKIP PENDING — when a job is paused or deleted, its slices that are
 * enqueued but not yet started will not run.
 *
 * Query:     slices[jobId] with scheduledAt >= from, status ENQUEUED
 * Per slice: condition status = ENQUEUED (a worker that already claimed it
 *            wins: that run completes); effect status = SKIPPED, leaves the
 *            sweep index, history TTL set.
 * Outcome:   how many were skipped.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SliceStatus } from '../../core/slice.ts';
import { conditionalUpdate } from './errors.ts';
import { queryAll } from './read-pages.ts';

export async function skipPendingSlices(
  dynamo: DynamoDBClient,
  slicesTable: string,
  jobId: string,
  fromMs: number,
  now: number,
  retentionMs: number,
): Promise<number> {
  const pending = await queryAll(dynamo, {
    TableName: slicesTable,
    KeyConditionExpression: 'jobId = :job AND scheduledAt >= :from',
    FilterExpression: '#status = :enqueued',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':job': { S: jobId },
      ':from': { N: String(fromMs) },
      ':enqueued': { S: SliceStatus.Enqueued },
    },
    ProjectionExpression: 'jobId, scheduledAt',
  });
  let skipped = 0;
  for (const item of pending) {
    if (await skipOne(dynamo, slicesTable, item, now, retentionMs)) skipped++;
  }
  return skipped;
}

function skipOne(
  dynamo: DynamoDBClient,
  slicesTable: string,
  key: Record<string, AttributeValue>,
  now: number,
  retentionMs: number,
): Promise<boolean> {
  // A worker that already claimed it wins: that run completes.
  return conditionalUpdate(
    dynamo,
    {
      TableName: slicesTable,
      Key: { jobId: key.jobId!, scheduledAt: key.scheduledAt! },
      UpdateExpression: 'SET #status = :skipped, finishedAt = :now, expiresAt = :expires REMOVE sweepShard, sweepAt',
      ConditionExpression: '#status = :enqueued',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':skipped': { S: SliceStatus.Skipped },
        ':enqueued': { S: SliceStatus.Enqueued },
        ':now': { N: String(now) },
        ':expires': { N: String(Math.floor((now + retentionMs) / 1000)) },
      },
    },
    () => {},
  );
}
