/**
 * Registers many schedules fast: BatchWriteItem (25 items a call) straight
 * into the jobs table, in the exact item format the job repository writes
 * (jobItem). The repository's put reads, validates and conditions each job:
 * right for users, a few hundred times too slow to set up a million.
 */
import { BatchWriteItemCommand, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { DEFAULT_POLICIES } from '../core/job-spec.ts';
import type { StoredJob } from '../core/ports.ts';
import { DEFAULT_DST_POLICY } from '../core/schedule.ts';
import { shardOf } from '../core/shard.ts';
import { jobItem } from '../aws/dynamo/items.ts';

const BATCH = 25;
const CONCURRENCY = 8;
const RETRIES = 8;

export class RegistrationError extends Error {
  override name = 'RegistrationError';
}

/** A daily job that fires at `fireAt`'s second of the day (UTC): one slice per scan window. */
export function dailyJobAt(id: string, fireAt: number, shardCount: number, handler: string, now: number, payload?: Record<string, unknown>): StoredJob {
  const at = new Date(fireAt);
  return {
    id,
    schedule: `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`,
    timeZone: 'UTC',
    dst: DEFAULT_DST_POLICY,
    handler,
    enabled: true,
    payload,
    policies: DEFAULT_POLICIES,
    shard: shardOf(id, shardCount),
    nextFireAt: Math.floor(fireAt / 1000) * 1000,
    version: 1,
    generation: 1,
    createdAt: now,
    updatedAt: now,
  };
}

/** Writes `jobs` (generated lazily, so a million never sit in memory at once); calls `onProgress` with the count written. */
export async function registerSchedules(
  dynamo: DynamoDBClient,
  jobsTable: string,
  count: number,
  jobAt: (index: number) => StoredJob,
  onProgress: (written: number) => void = () => {},
): Promise<void> {
  let next = 0;
  let written = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + BATCH);
      const requests: WriteRequest[] = [];
      for (let i = from; i < next; i++) requests.push({ PutRequest: { Item: jobItem(jobAt(i)) } });
      await writeBatch(dynamo, jobsTable, requests);
      written += requests.length;
      onProgress(written);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function writeBatch(dynamo: DynamoDBClient, table: string, requests: WriteRequest[]): Promise<void> {
  let pending = requests;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const result = await dynamo.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
    pending = result.UnprocessedItems?.[table] ?? [];
    if (pending.length === 0) return;
    if (attempt >= RETRIES) throw new RegistrationError(`DynamoDB left ${pending.length} schedules unprocessed after ${RETRIES} tries`);
    await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
  }
}
