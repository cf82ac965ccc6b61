/**
 * The OutboxStore port over DynamoDB (lib/core/chunks.ts). Outbox items are
 * written by the chunk commit (commit-chunk.ts); here the dispatcher's three
 * operations on them:
 *
 * FIND DUE  Query chunks/index/outbox: outboxShard = s AND dueAt ≤ now
 *           (eventually consistent: TAKE decides).
 * TAKE      UpdateItem chunks[executionKey, outbox#key] (no return values: the effect is known)
 *           Condition: status = PENDING AND dueAt = the dueAt read — nobody took it since
 *           Effect:    dueAt = until (hidden from other dispatchers meanwhile), deliveries + 1
 * RECORD    UpdateItem, Condition: status = PENDING AND deliveries = the taken count
 *           (a dispatcher whose take expired and was retaken records nothing)
 *           delivered → DELIVERED, deliveredAt, lastStatusCode; leaves the index
 *           retry     → dueAt = next try, lastError
 *           dead      → DEAD, lastError; leaves the index
 */
import type { DynamoDBClient, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { outboxSortKey, type DeliveryResult, type OutboxItem, type OutboxStore } from '../../core/chunks.ts';
import type { CronfenceConfig } from '../config.ts';
import { CHUNKS_TABLE } from '../schema.ts';
import { outboxKeyItem, toOutboxItem } from './chunk-items.ts';
import { conditionalUpdate } from './errors.ts';
import { queryAll } from './read-pages.ts';

const OUTBOX_INDEX = CHUNKS_TABLE.globalSecondaryIndexes[0]!.indexName;

/** Nobody took the item since it was read. */
const UNTAKEN = '#status = :pending AND dueAt = :seen';
/** Still the delivery this dispatcher took. */
const STILL_MINE = '#status = :pending AND deliveries = :taken';

export class DynamoOutboxStore implements OutboxStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'chunksTable'>,
  ) {}

  async findDue(shard: number, now: number, limit: number): Promise<OutboxItem[]> {
    const items = await queryAll(
      this.dynamo,
      {
        TableName: this.config.chunksTable,
        IndexName: OUTBOX_INDEX,
        KeyConditionExpression: 'outboxShard = :shard AND dueAt <= :now',
        ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':now': { N: String(now) } },
      },
      limit,
    );
    return items.map(toOutboxItem);
  }

  async take(item: OutboxItem, _now: number, until: number): Promise<OutboxItem | undefined> {
    const written = await conditionalUpdate(
      this.dynamo,
      {
        ...this.target(item),
        UpdateExpression: 'SET dueAt = :until, deliveries = deliveries + :one',
        ConditionExpression: UNTAKEN,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': { S: 'PENDING' },
          ':seen': { N: String(item.dueAt ?? 0) },
          ':until': { N: String(until) },
          ':one': { N: '1' },
        },
      },
      () => {},
    );
    return written ? { ...item, dueAt: until, deliveries: item.deliveries + 1 } : undefined;
  }

  async record(item: OutboxItem, result: DeliveryResult): Promise<void> {
    const values: NonNullable<UpdateItemCommandInput['ExpressionAttributeValues']> = {
      ':pending': { S: 'PENDING' },
      ':taken': { N: String(item.deliveries) },
    };
    const set: string[] = [];
    const add = (name: string, value: { S: string } | { N: string }): void => {
      set.push(`${name} = :${name}`);
      values[`:${name}`] = value;
    };
    if (result.statusCode !== undefined) add('lastStatusCode', { N: String(result.statusCode) });
    let remove = '';
    if (result.kind === 'delivered') {
      add('deliveredAt', { N: String(result.now) });
      set.push('#status = :delivered');
      values[':delivered'] = { S: 'DELIVERED' };
      remove = ' REMOVE outboxShard, dueAt';
    } else {
      add('lastError', { S: result.error.slice(0, 2000) });
      if (result.kind === 'retry') add('dueAt', { N: String(result.dueAt) });
      else {
        set.push('#status = :dead');
        values[':dead'] = { S: 'DEAD' };
        remove = ' REMOVE outboxShard, dueAt';
      }
    }
    await conditionalUpdate(
      this.dynamo,
      {
        ...this.target(item),
        UpdateExpression: `SET ${set.join(', ')}${remove}`,
        ConditionExpression: STILL_MINE,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      },
      () => {},
    );
  }

  async list(executionKey: string): Promise<OutboxItem[]> {
    const items = await queryAll(this.dynamo, {
      TableName: this.config.chunksTable,
      KeyConditionExpression: 'executionKey = :key AND begins_with(#item, :outbox)',
      ExpressionAttributeNames: { '#item': 'item' },
      ExpressionAttributeValues: { ':key': { S: executionKey }, ':outbox': { S: outboxSortKey('') } },
      ConsistentRead: true,
    });
    return items.map(toOutboxItem);
  }

  private target(item: OutboxItem): { TableName: string; Key: ReturnType<typeof outboxKeyItem> } {
    return { TableName: this.config.chunksTable, Key: outboxKeyItem(item.executionKey, item.requestKey) };
  }
}
