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
import { QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SliceStatus } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';

export async function skipPendingSlices(
  dynamo: DynamoDBClient,
  slicesTable: string,
  jobId: string,
  fromMs: number,
  now: number,
  retentionMs: number,
): Promise<number> {
  let skipped = 0;
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await onTable(slicesTable, () =>
      dynamo.send(
        new QueryCommand({
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
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      if (await skipOne(dynamo, slicesTable, item, now, retentionMs)) skipped++;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return skipped;
}

async function skipOne(
  dynamo: DynamoDBClient,
  slicesTable: string,
  key: Record<string, AttributeValue>,
  now: number,
  retentionMs: number,
): Promise<boolean> {
  try {
    await dynamo.send(
      new UpdateItemCommand({
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
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
