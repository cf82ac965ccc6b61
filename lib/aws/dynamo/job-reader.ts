/**
 * The JobReader port over DynamoDB: job records (tombstones included) as a
 * scanner, the reconciler and a worker read them.
 *
 * RECORD   GetItem jobs[jobId], consistent (a worker's check after its claim must see a change that returned).
 * RECORDS  BatchGetItem, 100 keys a request, unprocessed keys sent again with backoff;
 *          eventually consistent (half the price) unless asked.
 * SHARD    Scan with a filter on `shard` (a shard's first scan only).
 */
import { BatchGetItemCommand, GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Random } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { StoreBusyError } from '../../core/errors.ts';
import type { JobRecord } from '../../core/job-record.ts';
import type { JobReader } from '../../core/ports.ts';
import type { CronfenceConfig } from '../config.ts';
import { onTable, unprocessedBackoffMs } from './errors.ts';
import { toJobRecord, type Item } from './items.ts';
import { scanAll } from './read-pages.ts';

/** BatchGetItem's limit. */
const GET_BATCH = 100;
const GET_TRIES = 6;

export class DynamoJobReader implements JobReader {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'jobsTable'>,
    /** Whose timers pace asking again for unprocessed keys. */
    private readonly clock: Clock,
    /** The jitter of asking again for unprocessed keys. */
    private readonly random: Random,
  ) {}

  async record(id: string): Promise<JobRecord | undefined> {
    const table = this.config.jobsTable;
    const result = await onTable(table, () =>
      this.dynamo.send(new GetItemCommand({ TableName: table, Key: { jobId: { S: id } }, ConsistentRead: true })),
    );
    return result.Item ? toJobRecord(result.Item) : undefined;
  }

  async records(ids: readonly string[], consistent: boolean): Promise<Map<string, JobRecord>> {
    const found = new Map<string, JobRecord>();
    for (let i = 0; i < ids.length; i += GET_BATCH) {
      for (const item of await this.batch(ids.slice(i, i + GET_BATCH), consistent)) {
        const record = toJobRecord(item);
        found.set(record.id, record);
      }
    }
    return found;
  }

  async recordsOfShard(shard: number): Promise<JobRecord[]> {
    const table = this.config.jobsTable;
    const items = await onTable(table, () =>
      scanAll(this.dynamo, {
        TableName: table,
        FilterExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': 'shard' },
        ExpressionAttributeValues: { ':shard': { N: String(shard) } },
        ConsistentRead: true,
      }),
    );
    return items.map(toJobRecord);
  }

  private async batch(ids: readonly string[], consistent: boolean): Promise<Item[]> {
    const table = this.config.jobsTable;
    const items: Item[] = [];
    let keys = ids.map((id) => ({ jobId: { S: id } }));
    for (let tries = 1; keys.length > 0; tries++) {
      if (tries > GET_TRIES) throw new StoreBusyError('reading jobs', 'UnprocessedKeys');
      if (tries > 1) await this.clock.sleep(unprocessedBackoffMs(tries, this.random));
      const request = keys;
      const result = await onTable(table, () =>
        this.dynamo.send(new BatchGetItemCommand({ RequestItems: { [table]: { Keys: request, ConsistentRead: consistent } } })),
      );
      items.push(...(result.Responses?.[table] ?? []));
      keys = (result.UnprocessedKeys?.[table]?.Keys ?? []) as typeof keys;
    }
    return items;
  }
}
