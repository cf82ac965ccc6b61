/**
 * Registers many schedules fast: BatchWriteItem (25 items a call) straight
 * into the jobs table, in the exact item format the job repository writes
 * (jobItem), and each job's wheel entry placed where a scan would have put it
 * (the wheel store's own `place`), with every shard's cursor started first,
 * as its first scan would. The repository's put reads, validates and
 * conditions each job: right for users, a few hundred times too slow to set
 * up a million.
 */
import { systemClock } from '../../lib/core/clock.ts';
import { CronfenceError } from '../../lib/core/errors.ts';
import { BatchWriteItemCommand, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { WheelStore } from '../../lib/core/ports.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import { DEFAULT_DST_POLICY } from '../../lib/core/schedule.ts';
import { shardOf } from '../../lib/core/shard.ts';
import { bucketOf, freshCursor } from '../../lib/core/wheel.ts';
import type { CronfenceConfig } from '../../lib/aws/config.ts';
import { jobItem } from '../../lib/aws/dynamo/items.ts';
import { DynamoWheelStore } from '../../lib/aws/dynamo/wheel-store.ts';

const BATCH = 25;
/** Jobs a lane takes at once: their wheel entries are placed together, so a pack holds a full write unit of one shard's jobs. */
const CHUNK = 1000;
const CONCURRENCY = 8;
const RETRIES = 8;

export class RegistrationError extends CronfenceError {
  override name = 'RegistrationError';
}

/** A daily job that fires at `fireAt`'s second of the day (UTC): one slice per scan window. */
export function dailyJobAt(
  id: string,
  fireAt: number,
  shardCount: number,
  handler: string,
  now: number,
  payload?: Record<string, unknown>,
): StoredJob {
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

/**
 * The first whole second, at or after `atLeast`, in a bucket no scan of any
 * shard has taken up yet: a job registered due then is found by the next
 * scan whose lookahead reaches it. (A bucket a scan has passed is never
 * scanned again: a job put by the repository goes through the inbox instead.)
 */
export async function firstOpenSecond(wheel: WheelStore, shardCount: number, atLeast: number): Promise<number> {
  let open = atLeast;
  for (let shard = 0; shard < shardCount; shard++) open = Math.max(open, (await wheel.readCursor(shard))?.scannedThrough ?? 0);
  return Math.ceil(open / 1000) * 1000;
}

/**
 * Writes `jobs` (generated lazily, so a million never sit in memory at once); calls `onProgress` with the count written.
 * Each job is due from its `nextFireAt`, which must be in a bucket no scan has passed ({@link firstOpenSecond}).
 */
export async function registerSchedules(
  dynamo: DynamoDBClient,
  config: Pick<CronfenceConfig, 'jobsTable' | 'wheelTable' | 'shardCount'>,
  count: number,
  jobAt: (index: number) => StoredJob,
  onProgress: (written: number) => void = () => {},
): Promise<void> {
  const wheel = new DynamoWheelStore(dynamo, config, systemClock, Math.random);
  const now = Date.now();
  for (let shard = 0; shard < config.shardCount; shard++)
    if ((await wheel.readCursor(shard)) === undefined) await wheel.moveCursor(shard, freshCursor(now));
  let next = 0;
  let written = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const from = next;
      next = Math.min(count, next + CHUNK);
      const jobs: StoredJob[] = [];
      for (let i = from; i < next; i++) jobs.push(jobAt(i));
      for (let i = 0; i < jobs.length; i += BATCH) {
        await writeBatch(
          dynamo,
          config.jobsTable,
          jobs.slice(i, i + BATCH).map((job) => ({ PutRequest: { Item: jobItem(job) } })),
        );
      }
      for (let shard = 0; shard < config.shardCount; shard++) {
        const own = jobs.filter((job) => job.shard === shard);
        await wheel.place(
          shard,
          own.map((job) => ({ jobId: job.id, generation: job.generation, from: job.nextFireAt, bucket: bucketOf(job.nextFireAt) })),
          now,
        );
      }
      written += jobs.length;
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
