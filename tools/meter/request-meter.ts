/**
 * The one request meter: a client middleware that counts every AWS request a
 * process makes, per service.Operation, and what each moved: items read and
 * written, DynamoDB request units by AWS's rules (request-units.ts), SQS
 * messages, EventBridge entries. The tools attach one to their replicas
 * (replica-meter.ts): the repository's `cronfence dev` (`npm start`) and the
 * chaos drill report its request counts, the bench its units.
 * It sits just outside the deserializer, below the retry middleware, so each
 * HTTP attempt counts, as AWS bills; a refused conditional write consumes its
 * units too.
 *
 * Sizes of items it has not seen whole (an update's target) are learned from
 * earlier puts, reads and ALL_NEW/ALL_OLD replies in the same process; an
 * unknown one counts as under 1 KB.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DeserializeMiddleware, MiddlewareStack } from '@smithy/types';
import type { AwsClients } from '../../lib/aws/clients.ts';
import type { CronfenceConfig } from '../../lib/aws/config.ts';
import { CHUNKS_TABLE, JOBS_TABLE, SLICES_TABLE, WHEEL_TABLE, type TableDefinition } from '../../lib/aws/schema.ts';
import {
  indexWritesForPut,
  indexWritesForUpdate,
  itemBytes,
  projectedBytes,
  readRequestUnits,
  updatedAttributes,
  writeRequestUnits,
  type IndexShape,
  type Item,
  type ReadConsistency,
} from './request-units.ts';

/** What the bench groups requests into (the kinds). */
export const REQUEST_KINDS = [
  'dynamoRead',
  'dynamoWrite',
  'dynamoTransactWrite',
  'heartbeat',
  'sqsSend',
  'sqsReceive',
  'sqsReceiveEmpty',
  'sqsDelete',
  /** ChangeMessageVisibilityBatch: the claims' (one per batch of claims), an early message hidden until its second. */
  'sqsVisibility',
  /** A single ChangeMessageVisibility: a heartbeat's extension, or a message held back off the happy path (a lost claim, a retry). */
  'sqsExtension',
  'event',
  'other',
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface MeterSnapshot {
  /** Requests by service.Operation (`dynamo.PutItem`, `sqs.ReceiveMessage`). */
  readonly requests: Record<string, number>;
  /** Milliseconds those requests took, summed, by service.Operation: sent to answered, the emulator's queue included. */
  readonly requestMs: Record<string, number>;
  readonly kinds: Record<RequestKind, number>;
  /** Items inside TransactWriteItems requests. */
  readonly transactItems: number;
  readonly itemsRead: number;
  readonly itemsWritten: number;
  /** Base-table write request units, by request kind. */
  readonly writeUnits: Record<RequestKind, number>;
  readonly readUnits: Record<RequestKind, number>;
  /** GSI write units by "table/index" logical name (slices/sweep, chunks/outbox). */
  readonly indexWriteUnits: Record<string, number>;
  /** Base-table write units by table logical name, renewals included (which partitions take the writes). */
  readonly tableWriteUnits: Record<string, number>;
  readonly sqsMessagesSent: number;
  readonly sqsMessagesReceived: number;
  readonly eventEntries: number;
  /** The largest resident set of any process in the snapshot (peak, not summed): what a Lambda's memory must hold. */
  readonly maxRssBytes: number;
}

interface TableShape {
  readonly logicalName: string;
  readonly keys: readonly string[];
  readonly indexes: readonly IndexShape[];
}

const SIZE_CACHE_LIMIT = 200_000;
/** Keys plus a status and a scan id: what the sweep index projects. */
const SMALL_PROJECTION_BYTES = 100;

export class RequestMeter {
  private readonly tables = new Map<string, TableShape>();
  private readonly sizes = new Map<string, number>();
  /**
   * The indexes each item seen last carried the keys of: DynamoDB bills an
   * index write only for an item that is in the index (or enters it), so a
   * commit that removes the sweep keys of a slice that never had them costs none.
   */
  private readonly indexed = new Map<string, readonly string[]>();
  private data = emptySnapshot();

  /** @param config the tables whose keys and indexes it knows (without it, no index write units are counted). */
  constructor(config?: Pick<CronfenceConfig, 'jobsTable' | 'slicesTable'> & Partial<Pick<CronfenceConfig, 'chunksTable' | 'wheelTable'>>) {
    if (!config) return;
    this.tables.set(config.jobsTable, shape(JOBS_TABLE));
    this.tables.set(config.slicesTable, shape(SLICES_TABLE));
    if (config.wheelTable !== undefined) this.tables.set(config.wheelTable, shape(WHEEL_TABLE));
    if (config.chunksTable !== undefined) this.tables.set(config.chunksTable, shape(CHUNKS_TABLE));
  }

  /** Requests so far by service.Operation (live, not a copy). */
  get counts(): Readonly<Record<string, number>> {
    return this.data.requests;
  }

  attach(clients: AwsClients): this {
    for (const [service, client] of Object.entries(clients)) {
      const meter: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        const input = (args as { input?: unknown }).input as Record<string, unknown>;
        const sentAt = performance.now();
        try {
          const result = await next(args);
          this.record(service, operation, input, result.output as Record<string, unknown>, undefined, performance.now() - sentAt);
          return result;
        } catch (error) {
          this.record(service, operation, input, undefined, error as Record<string, unknown>, performance.now() - sentAt);
          throw error;
        }
      };
      // Outside the deserializer, so it sees parsed outputs and typed errors; inside the retries, so each attempt counts.
      (client.middlewareStack as MiddlewareStack<object, object>).addRelativeTo(meter, {
        relation: 'before',
        toMiddleware: 'deserializerMiddleware',
        name: `cronfenceRequestMeter-${service}`,
      });
    }
    return this;
  }

  snapshot(): MeterSnapshot {
    return { ...structuredClone(this.data), maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }

  reset(): void {
    this.data = emptySnapshot();
  }

  /** Exposed for tests: account one request as the middleware would. */
  record(
    service: string,
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown> | undefined,
    error: Record<string, unknown> | undefined,
    elapsedMs = 0,
  ): void {
    const d = this.data;
    const name = `${service}.${operation}`;
    d.requests[name] = (d.requests[name] ?? 0) + 1;
    d.requestMs[name] = (d.requestMs[name] ?? 0) + elapsedMs;
    if (service === 'dynamo') this.recordDynamo(operation, input, output, error);
    else if (service === 'sqs') this.recordSqs(operation, input, output);
    else if (service === 'events') {
      d.kinds.event++;
      d.eventEntries += ((input.Entries as unknown[]) ?? []).length;
    } else d.kinds.other++;
  }

  private recordSqs(operation: string, input: Record<string, unknown>, output: Record<string, unknown> | undefined): void {
    const d = this.data;
    if (operation === 'SendMessage' || operation === 'SendMessageBatch') {
      d.kinds.sqsSend++;
      d.sqsMessagesSent += operation === 'SendMessage' ? 1 : ((input.Entries as unknown[]) ?? []).length;
    } else if (operation === 'ReceiveMessage') {
      const received = ((output?.Messages as unknown[]) ?? []).length;
      d.sqsMessagesReceived += received;
      if (received === 0) d.kinds.sqsReceiveEmpty++;
      else d.kinds.sqsReceive++;
    } else if (operation === 'DeleteMessage' || operation === 'DeleteMessageBatch') d.kinds.sqsDelete++;
    else if (operation === 'ChangeMessageVisibilityBatch') d.kinds.sqsVisibility++;
    else if (operation === 'ChangeMessageVisibility') d.kinds.sqsExtension++;
    else d.kinds.other++;
  }

  private recordDynamo(
    operation: string,
    input: Record<string, unknown>,
    output: Record<string, unknown> | undefined,
    error: Record<string, unknown> | undefined,
  ): void {
    switch (operation) {
      case 'GetItem': {
        const item = output?.Item as Item | undefined;
        if (item) this.learn(String(input.TableName), item);
        this.read('dynamoRead', item ? itemBytes(item) : 0, item ? 1 : 0, input.ConsistentRead ? 'strong' : 'eventual');
        return;
      }
      case 'BatchGetItem': {
        this.data.kinds.dynamoRead++;
        const requested = (input.RequestItems as Record<string, { ConsistentRead?: boolean }>) ?? {};
        for (const [table, items] of Object.entries((output?.Responses as Record<string, Item[]>) ?? {})) {
          // Billed item by item, each rounded up to 4 KB.
          for (const item of items) {
            this.learn(table, item);
            this.read('dynamoRead', itemBytes(item), 1, requested[table]?.ConsistentRead ? 'strong' : 'eventual', false);
          }
        }
        return;
      }
      case 'Query':
      case 'Scan': {
        const items = (output?.Items as Item[] | undefined) ?? [];
        const table = String(input.TableName);
        if (!input.IndexName) for (const item of items) this.learn(table, item);
        const bytes = items.reduce((sum, item) => sum + itemBytes(item), 0);
        this.read('dynamoRead', bytes, items.length, input.ConsistentRead && !input.IndexName ? 'strong' : 'eventual');
        return;
      }
      case 'PutItem':
      case 'UpdateItem':
      case 'DeleteItem': {
        const kind: RequestKind = operation === 'UpdateItem' && isRenewal(input) ? 'heartbeat' : 'dynamoWrite';
        this.data.kinds[kind]++;
        const returned = (output?.Attributes ?? error?.Item) as Item | undefined;
        this.write(kind, operation.replace('Item', '') as WriteAction, input, returned, false);
        return;
      }
      case 'TransactWriteItems': {
        this.data.kinds.dynamoTransactWrite++;
        const items = (input.TransactItems as Record<string, Record<string, unknown>>[]) ?? [];
        this.data.transactItems += items.length;
        for (const entry of items) {
          const [action, body] = Object.entries(entry)[0] ?? [];
          if (!action || !body) continue;
          if (action === 'ConditionCheck') {
            this.read('dynamoTransactWrite', this.knownSize(body), 0, 'transactional', false);
            continue;
          }
          this.write('dynamoTransactWrite', action as WriteAction, body, undefined, true);
        }
        return;
      }
      case 'BatchWriteItem': {
        this.data.kinds.dynamoWrite++;
        for (const [table, requests] of Object.entries(
          (input.RequestItems as Record<string, Record<string, { Item?: Item; Key?: Item }>[]>) ?? {},
        )) {
          for (const request of requests) {
            if (request.PutRequest) this.write('dynamoWrite', 'Put', { TableName: table, Item: request.PutRequest.Item }, undefined, false);
            else if (request.DeleteRequest)
              this.write('dynamoWrite', 'Delete', { TableName: table, Key: request.DeleteRequest.Key }, undefined, false);
          }
        }
        return;
      }
      default:
        this.data.kinds.other++;
    }
  }

  private read(kind: RequestKind, bytes: number, items: number, consistency: ReadConsistency, countRequest = true): void {
    if (countRequest && kind === 'dynamoRead') this.data.kinds.dynamoRead++;
    this.data.itemsRead += items;
    this.data.readUnits[kind] += readRequestUnits(bytes, consistency);
  }

  private write(
    kind: RequestKind,
    action: WriteAction,
    body: Record<string, unknown>,
    returned: Item | undefined,
    transactional: boolean,
  ): void {
    const tableName = String(body.TableName);
    const table = this.tables.get(tableName);
    const d = this.data;
    d.itemsWritten++;
    if (action === 'Put') {
      const item = body.Item as Item;
      const size = Math.max(itemBytes(item), this.knownSize({ TableName: tableName, Key: keyOf(item, table) }));
      this.addWrite(kind, table, writeRequestUnits(size, { transactional }));
      this.learn(tableName, item);
      for (const index of table?.indexes ?? []) this.addIndex(table, index, indexWritesForPut(item, index, table?.keys ?? []));
      return;
    }
    const before = this.knownSize(body);
    const after = returned ? itemBytes(returned) : before;
    this.addWrite(kind, table, writeRequestUnits(Math.max(before, after), { transactional }));
    if (returned) this.learn(tableName, returned);
    if (!table) return;
    if (action === 'Delete') {
      for (const index of table.indexes) this.addIndex(table, index, 1);
      return;
    }
    if (action !== 'Update') return;
    const change = updatedAttributes(String(body.UpdateExpression ?? ''), (body.ExpressionAttributeNames as Record<string, string>) ?? {});
    const key = cacheKey(tableName, body.Key as Item);
    const membership = this.indexed.get(key);
    for (const index of table.indexes) {
      // Known from the item last seen; otherwise setting an index's partition key brings it in (a resume), else assume it was there.
      const wasIndexed = membership ? membership.includes(index.indexName) : !change.set.includes(index.keyAttributes[0] ?? '');
      const projected = returned
        ? projectedBytes(returned, index, table.keys)
        : index.projected === undefined
          ? after
          : SMALL_PROJECTION_BYTES;
      this.addIndex(table, index, indexWritesForUpdate(change, index, projected, wasIndexed));
    }
    if (!returned && membership) {
      const keyOfIndex = (name: string): string => table.indexes.find((index) => index.indexName === name)?.keyAttributes[0] ?? '';
      const stays = membership.filter((name) => !change.removed.includes(keyOfIndex(name)));
      const enters = table.indexes.filter((index) => change.set.includes(index.keyAttributes[0] ?? '')).map((index) => index.indexName);
      this.indexed.set(key, [...new Set([...stays, ...enters])]);
    }
  }

  private addWrite(kind: RequestKind, table: TableShape | undefined, units: number): void {
    this.data.writeUnits[kind] += units;
    if (table) this.data.tableWriteUnits[table.logicalName] = (this.data.tableWriteUnits[table.logicalName] ?? 0) + units;
  }

  private addIndex(table: TableShape | undefined, index: IndexShape, units: number): void {
    if (!table || units === 0) return;
    const key = `${table.logicalName}/${index.indexName}`;
    this.data.indexWriteUnits[key] = (this.data.indexWriteUnits[key] ?? 0) + units;
  }

  private learn(tableName: string, item: Item): void {
    const table = this.tables.get(tableName);
    if (!table) return;
    if (this.sizes.size > SIZE_CACHE_LIMIT) {
      this.sizes.clear();
      this.indexed.clear();
    }
    const key = cacheKey(tableName, keyOf(item, table));
    this.sizes.set(key, itemBytes(item));
    this.indexed.set(
      key,
      table.indexes.filter((index) => index.keyAttributes.every((name) => item[name] !== undefined)).map((index) => index.indexName),
    );
  }

  private knownSize(body: Record<string, unknown>): number {
    const key = body.Key as Item | undefined;
    if (!key) return 0;
    return this.sizes.get(cacheKey(String(body.TableName), key)) ?? 0;
  }
}

type WriteAction = 'Put' | 'Update' | 'Delete';

/** A heartbeat: the renewal sets only the lease's end (lib/aws/dynamo/renew-lease.ts). */
function isRenewal(input: Record<string, unknown>): boolean {
  return /^SET leaseExpiresAt = :\w+$/.test(String(input.UpdateExpression ?? '').trim());
}

function shape(table: TableDefinition): TableShape {
  return {
    logicalName: table.logicalName,
    keys: [table.partitionKey.name, ...(table.sortKey ? [table.sortKey.name] : [])],
    indexes: table.globalSecondaryIndexes.map((index) => ({
      indexName: index.indexName,
      keyAttributes: [index.partitionKey.name, ...(index.sortKey ? [index.sortKey.name] : [])],
      projected:
        index.projection.type === 'ALL' ? undefined : index.projection.type === 'KEYS_ONLY' ? [] : [...index.projection.nonKeyAttributes],
    })),
  };
}

function keyOf(item: Item, table: TableShape | undefined): Item {
  const keys = table?.keys ?? [];
  return Object.fromEntries(keys.flatMap((name) => (item[name] ? [[name, item[name] as AttributeValue]] : [])));
}

function cacheKey(tableName: string, key: Item): string {
  return `${tableName}|${JSON.stringify(Object.entries(key).sort(([a], [b]) => a.localeCompare(b)))}`;
}

function zeroKinds(): Record<RequestKind, number> {
  return Object.fromEntries(REQUEST_KINDS.map((kind) => [kind, 0])) as Record<RequestKind, number>;
}

export function emptySnapshot(): MeterSnapshot & {
  requests: Record<string, number>;
  requestMs: Record<string, number>;
  indexWriteUnits: Record<string, number>;
  transactItems: number;
  itemsRead: number;
  itemsWritten: number;
  sqsMessagesSent: number;
  sqsMessagesReceived: number;
  eventEntries: number;
  maxRssBytes: number;
} {
  return {
    requests: {},
    requestMs: {},
    kinds: zeroKinds(),
    transactItems: 0,
    itemsRead: 0,
    itemsWritten: 0,
    writeUnits: zeroKinds(),
    readUnits: zeroKinds(),
    indexWriteUnits: {},
    tableWriteUnits: {},
    sqsMessagesSent: 0,
    sqsMessagesReceived: 0,
    eventEntries: 0,
    maxRssBytes: 0,
  };
}

/** a + b, field by field. */
export function addSnapshots(a: MeterSnapshot, b: MeterSnapshot): MeterSnapshot {
  return combine(a, b, 1);
}

/** a − b, field by field (the requests of one phase, from two snapshots). */
export function subtractSnapshots(a: MeterSnapshot, b: MeterSnapshot): MeterSnapshot {
  return combine(a, b, -1);
}

function combine(a: MeterSnapshot, b: MeterSnapshot, sign: 1 | -1): MeterSnapshot {
  const merge = <K extends string>(x: Record<K, number>, y: Record<K, number>): Record<K, number> => {
    const out = { ...x };
    for (const [key, value] of Object.entries(y) as [K, number][]) out[key] = (out[key] ?? 0) + sign * value;
    return out;
  };
  return {
    requests: merge(a.requests, b.requests),
    requestMs: merge(a.requestMs ?? {}, b.requestMs ?? {}),
    kinds: merge(a.kinds, b.kinds),
    transactItems: a.transactItems + sign * b.transactItems,
    itemsRead: a.itemsRead + sign * b.itemsRead,
    itemsWritten: a.itemsWritten + sign * b.itemsWritten,
    writeUnits: merge(a.writeUnits, b.writeUnits),
    readUnits: merge(a.readUnits, b.readUnits),
    indexWriteUnits: merge(a.indexWriteUnits, b.indexWriteUnits),
    tableWriteUnits: merge(a.tableWriteUnits, b.tableWriteUnits),
    sqsMessagesSent: a.sqsMessagesSent + sign * b.sqsMessagesSent,
    sqsMessagesReceived: a.sqsMessagesReceived + sign * b.sqsMessagesReceived,
    eventEntries: a.eventEntries + sign * b.eventEntries,
    // A peak: the later snapshot's (a − b) or the larger of the two processes' (a + b).
    maxRssBytes: sign === 1 ? Math.max(a.maxRssBytes, b.maxRssBytes) : a.maxRssBytes,
  };
}

export function sumValues(record: Readonly<Record<string, number>>): number {
  return Object.values(record).reduce((sum, value) => sum + value, 0);
}
