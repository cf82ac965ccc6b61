/**
 * A job change's writes, all or nothing, or finished by the next call
 * (docs/architecture.md, "Multi-write operations"). The change is decided in
 * core/job-lifecycle.ts, its writes planned in core/job-change.ts and run by
 * engine/job-repository.ts; here they are written (job-store.ts's writeChange).
 *
 * WRITE   one TransactWriteItems across the jobs and wheel tables:
 *   [0] Put jobs[jobId]                       condition version = the one read (attribute_not_exists(jobId) for a new id)
 *   [1] Put wheel[shard, !inbox#<jobId>]      when the new generation runs: what makes a scan take it up;
 *                                             condition NO_ENTRY OR NOT_NEWER (never over a newer generation)
 *   [2] Put wheel[shard, !settle#<jobId>#<g>] when the ended generation g had occurrences due with no slice:
 *                                             what settling them needs (its definition, range and reason)
 *         A cancelled [0] or [1] is a lost race, and a TransactionConflict (a scan removing the inbox entry at
 *         that moment) one too: the caller reads again and plans again.
 * SETTLE  then those occurrences with no slice yet are written SKIPPED (create-slices.ts SETTLE), and
 *         [2] is deleted, last. A call that fails in between leaves [2]: the next change or retry of the
 *         same job (any of put, pause, resume, delete) finds it (one Query) and finishes it first.
 */
import { DeleteItemCommand, TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { DueSettle, JobWrite } from '../../core/job-change.ts';
import type { CronfenceConfig } from '../config.ts';
import { cancellationCodes, onTable, onTables } from './errors.ts';
import { fromItem, jobRecordItem, toItem } from './items.ts';
import { queryAll } from './read-pages.ts';

const SETTLE_PREFIX = '!settle#';

type ChangeTables = Pick<CronfenceConfig, 'jobsTable' | 'wheelTable'>;

/** @returns false when a condition failed (another change came first) or the transaction met another: read again and plan again. */
export async function writeJobChange(dynamo: DynamoDBClient, tables: ChangeTables, write: JobWrite): Promise<boolean> {
  const items: TransactWriteItem[] = [
    {
      Put: {
        TableName: tables.jobsTable,
        Item: jobRecordItem(write.next),
        ...(write.previous
          ? { ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': { N: String(write.previous.version) } } }
          : { ConditionExpression: 'attribute_not_exists(jobId)' }),
      },
    },
  ];
  if (write.inbox) {
    items.push({
      Put: {
        TableName: tables.wheelTable,
        Item: {
          ...wheelKey(write.shard, `!inbox#${write.inbox.jobId}`),
          jobId: { S: write.inbox.jobId },
          generation: { N: String(write.inbox.generation) },
          from: { N: String(write.inbox.from) },
        },
        ConditionExpression: 'attribute_not_exists(generation) OR generation <= :generation',
        ExpressionAttributeValues: { ':generation': { N: String(write.inbox.generation) } },
      },
    });
  }
  if (write.settle)
    items.push({
      Put: { TableName: tables.wheelTable, Item: { ...toItem({ ...write.settle }), ...wheelKey(write.shard, settleKey(write.settle)) } },
    });
  try {
    await onTables(dynamo, { cronfence: [tables.jobsTable, tables.wheelTable] }, () =>
      dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })),
    );
    return true;
  } catch (error) {
    // A lost race, or a conflict with a scan's removal of the inbox entry at that moment: read again and plan again.
    if (cancellationCodes(error)?.some((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) return false;
    throw error;
  }
}

/** The settles of `jobId` a change left unfinished, oldest generation first. */
export async function pendingSettles(dynamo: DynamoDBClient, tables: ChangeTables, shard: number, jobId: string): Promise<DueSettle[]> {
  const items = await onTable(tables.wheelTable, () =>
    queryAll(dynamo, {
      TableName: tables.wheelTable,
      KeyConditionExpression: '#shard = :shard AND begins_with(#entry, :prefix)',
      ExpressionAttributeNames: { '#shard': 'shard', '#entry': 'entry' },
      ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':prefix': { S: `${SETTLE_PREFIX}${jobId}#` } },
      ConsistentRead: true,
    }),
  );
  return items.map((item) => fromItem(item) as unknown as DueSettle).sort((a, b) => a.generation - b.generation);
}

/** Removes a settle once its occurrences all have a record. */
export async function clearSettle(dynamo: DynamoDBClient, tables: ChangeTables, settle: DueSettle): Promise<void> {
  await onTable(tables.wheelTable, () =>
    dynamo.send(new DeleteItemCommand({ TableName: tables.wheelTable, Key: wheelKey(settle.shard, settleKey(settle)) })),
  );
}

function settleKey(settle: Pick<DueSettle, 'jobId' | 'generation'>): string {
  return `${SETTLE_PREFIX}${settle.jobId}#${String(settle.generation).padStart(12, '0')}`;
}

function wheelKey(shard: number, entry: string): Record<string, { N: string } | { S: string }> {
  return { shard: { N: String(shard) }, entry: { S: entry } };
}
