/**
 * SWEEP — find live slices whose message may be lost, and push their next
 * look out once a message has been re-sent.
 *
 * Query:     sweep index, sweepShard = S AND sweepAt in a range
 *            (only live slices carry sweepShard: final ones left the index),
 *            optionally only those created by one scan (scanId)
 * DEFER:     slices[jobId, scheduledAt], condition attribute_exists(sweepShard)
 *            (still live), effect sweepAt = T. A lost race means the slice went
 *            final meanwhile: nothing to do.
 */
import { QueryCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SweepCandidate } from '../../core/ports.ts';
import type { SliceKey, SliceStatus } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { fromItem, sliceKeyItem } from './items.ts';

export const SWEEP_INDEX = 'sweep';


export async function querySweepIndex(
  dynamo: DynamoDBClient,
  tableName: string,
  shard: number,
  fromMs: number,
  toMs: number,
  limit: number,
  scanId?: string,
): Promise<SweepCandidate[]> {
  const found: SweepCandidate[] = [];
  let startKey: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const page = await onTable(tableName, () =>
      dynamo.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: SWEEP_INDEX,
          KeyConditionExpression: 'sweepShard = :shard AND sweepAt BETWEEN :from AND :to',
          ...(scanId !== undefined && { FilterExpression: 'scanId = :scan' }),
          ExpressionAttributeValues: {
            ':shard': { N: String(shard) },
            ':from': { N: String(fromMs) },
            ':to': { N: String(toMs) },
            ...(scanId !== undefined && { ':scan': { S: scanId } }),
          },
          Limit: limit - found.length,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
    for (const item of page.Items ?? []) {
      const raw = fromItem(item);
      found.push({ jobId: raw.jobId as string, scheduledAt: raw.scheduledAt as number, status: raw.status as SliceStatus });
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey && found.length < limit);
  return found;
}

export async function deferSweep(dynamo: DynamoDBClient, tableName: string, key: SliceKey, sweepAt: number): Promise<void> {
  try {
    await onTable(tableName, () =>
      dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: sliceKeyItem(key),
          UpdateExpression: 'SET sweepAt = :sweep',
          ConditionExpression: 'attribute_exists(sweepShard)',
          ExpressionAttributeValues: { ':sweep': { N: String(sweepAt) } },
        }),
      ),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
