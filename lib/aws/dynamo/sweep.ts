/**
 * SWEEP — find live slices whose message may be lost, and push their next
 * look out once a message has been re-sent.
 *
 * Query:     sweep index, sweepShard = S AND sweepAt in a range
 *            (only live slices carry sweepShard: final ones left the index)
 * DEFER:     slices[jobId, scheduledAt], condition sweepAt = the one read
 *            (`mayDeferSweep`, core/slice-transitions.ts) (the
 *            slice is still live and nothing moved it since: a claim or a
 *            failure sets its own sweep time, which a stale defer must not
 *            overwrite), effect sweepAt = T. A lost race means the slice moved
 *            on or went final meanwhile: nothing to do.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SweepCandidate } from '../../core/ports.ts';
import { conditionalUpdate } from './errors.ts';
import { fromItem, sliceKeyItem } from './items.ts';
import { queryAll } from './read-pages.ts';

export const SWEEP_INDEX = 'sweep';

export async function querySweepIndex(
  dynamo: DynamoDBClient,
  tableName: string,
  shard: number,
  fromMs: number,
  toMs: number,
  limit: number,
): Promise<SweepCandidate[]> {
  const items = await queryAll(
    dynamo,
    {
      TableName: tableName,
      IndexName: SWEEP_INDEX,
      KeyConditionExpression: 'sweepShard = :shard AND sweepAt BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':shard': { N: String(shard) },
        ':from': { N: String(fromMs) },
        ':to': { N: String(toMs) },
      },
    },
    limit,
  );
  return items.map((item) => {
    const raw = fromItem(item);
    return { jobId: raw.jobId as string, scheduledAt: raw.scheduledAt as number, sweepAt: raw.sweepAt as number };
  });
}

export async function deferSweep(dynamo: DynamoDBClient, tableName: string, candidate: SweepCandidate, sweepAt: number): Promise<void> {
  await conditionalUpdate(
    dynamo,
    {
      TableName: tableName,
      Key: sliceKeyItem(candidate),
      UpdateExpression: 'SET sweepAt = :sweep',
      ConditionExpression: 'sweepAt = :seen',
      ExpressionAttributeValues: { ':sweep': { N: String(sweepAt) }, ':seen': { N: String(candidate.sweepAt) } },
    },
    () => {},
  );
}
