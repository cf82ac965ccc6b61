/**
 * Idempotent creation of cronfence's tables, queues and event bus from the
 * definitions in schema.ts, for the emulator (and for a quick start against a
 * real account without CDK). A table that already exists is checked against
 * its definition, never altered; a mismatch is an error that names it.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, ResourceAlreadyExistsException, type EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { CronfenceError } from '../core/errors.ts';
import type { AwsClients } from './clients.ts';
import type { CronfenceConfig } from './config.ts';
import { DEAD_LETTER_QUEUE, SCAN_QUEUE, TABLES, WORK_QUEUE, type QueueDefinition, type TableDefinition } from './schema.ts';

export class SchemaMismatchError extends CronfenceError {
  override name = 'SchemaMismatchError';
  constructor(
    readonly tableName: string,
    readonly detail: string,
  ) {
    super(`table ${JSON.stringify(tableName)} exists with a different schema: ${detail}`);
  }
}

export interface BootstrapResult {
  readonly tables: Record<string, string>;
  readonly queueUrls: { work: string; scan: string; deadLetter: string };
  readonly eventBusName: string;
}

export function physicalTableName(config: CronfenceConfig, table: TableDefinition): string {
  const byLogical: Record<string, string> = {
    jobs: config.jobsTable,
    wheel: config.wheelTable,
    slices: config.slicesTable,
    chunks: config.chunksTable,
  };
  return byLogical[table.logicalName] ?? `${config.prefix}-${table.logicalName}`;
}

export async function bootstrap(clients: AwsClients, config: CronfenceConfig): Promise<BootstrapResult> {
  const tables: Record<string, string> = {};
  await Promise.all(
    TABLES.map(async (table) => {
      const name = physicalTableName(config, table);
      await ensureTable(clients.dynamo, name, table);
      tables[table.logicalName] = name;
    }),
  );
  const deadLetter = await ensureQueue(clients.sqs, config.deadLetterQueueName, DEAD_LETTER_QUEUE);
  const deadLetterArn = await queueArn(clients.sqs, deadLetter);
  const [work, scan] = await Promise.all([
    // As deployed: behind a Lambda event source the work queue's visibility is the worker's timeout (config says so).
    ensureQueue(
      clients.sqs,
      config.workQueueName,
      {
        ...WORK_QUEUE,
        visibilityTimeoutSeconds: Math.max(WORK_QUEUE.visibilityTimeoutSeconds, Math.ceil(config.workQueueVisibilityMs / 1000)),
      },
      deadLetterArn,
    ),
    ensureQueue(clients.sqs, config.scanQueueName, SCAN_QUEUE, deadLetterArn),
  ]);
  await ensureEventBus(clients.events, config.eventBusName);
  return { tables, queueUrls: { work, scan, deadLetter }, eventBusName: config.eventBusName };
}

/** The CreateTable request for a definition; the CDK construct mirrors this. */
export function createTableInput(tableName: string, table: TableDefinition): CreateTableCommandInput {
  const attributes = new Map<string, 'S' | 'N'>();
  const keys = [table.partitionKey, table.sortKey, ...table.globalSecondaryIndexes.flatMap((index) => [index.partitionKey, index.sortKey])];
  for (const key of keys) if (key) attributes.set(key.name, key.type);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
    KeySchema: keySchema(table.partitionKey.name, table.sortKey?.name),
    ...(table.globalSecondaryIndexes.length > 0 && {
      GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: keySchema(index.partitionKey.name, index.sortKey?.name),
        Projection:
          index.projection.type === 'INCLUDE'
            ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection.nonKeyAttributes] }
            : { ProjectionType: index.projection.type },
      })),
    }),
  };
}

async function ensureTable(dynamo: DynamoDBClient, tableName: string, table: TableDefinition): Promise<void> {
  try {
    await dynamo.send(new CreateTableCommand(createTableInput(tableName, table)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName: tableName });
  const described = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
  assertMatches(tableName, table, described.Table);
  if (table.timeToLiveAttribute) {
    try {
      await dynamo.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: table.timeToLiveAttribute, Enabled: true },
        }),
      );
    } catch (error) {
      // Enabling TTL twice is refused ("already enabled"); that is the state we want.
      if (!(error instanceof Error && /already enabled|TimeToLive is already/i.test(error.message))) throw error;
    }
  }
}

function assertMatches(tableName: string, table: TableDefinition, described: TableDescription | undefined): void {
  const expected = createTableInput(tableName, table);
  const actualKeys = JSON.stringify(described?.KeySchema ?? []);
  if (actualKeys !== JSON.stringify(expected.KeySchema)) {
    throw new SchemaMismatchError(tableName, `key schema ${actualKeys}, expected ${JSON.stringify(expected.KeySchema)}`);
  }
  for (const index of expected.GlobalSecondaryIndexes ?? []) {
    const found = described?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === index.IndexName);
    if (!found) throw new SchemaMismatchError(tableName, `index ${JSON.stringify(index.IndexName)} is missing`);
    if (JSON.stringify(found.KeySchema) !== JSON.stringify(index.KeySchema)) {
      throw new SchemaMismatchError(
        tableName,
        `index ${JSON.stringify(index.IndexName)} has key schema ${JSON.stringify(found.KeySchema)}`,
      );
    }
  }
}

/** The CreateQueue attributes for a definition; the CDK construct mirrors this. */
export function queueAttributes(queue: QueueDefinition, deadLetterArn?: string): Record<string, string> {
  return {
    VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(queue.messageRetentionSeconds),
    ReceiveMessageWaitTimeSeconds: String(queue.receiveMessageWaitTimeSeconds),
    ...(deadLetterArn &&
      queue.maxReceiveCount !== undefined && {
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterArn, maxReceiveCount: queue.maxReceiveCount }),
      }),
  };
}

async function ensureQueue(sqs: SQSClient, queueName: string, queue: QueueDefinition, deadLetterArn?: string): Promise<string> {
  // CreateQueue is idempotent for identical attributes and refuses different ones, naming the queue.
  const result = await sqs.send(new CreateQueueCommand({ QueueName: queueName, Attributes: queueAttributes(queue, deadLetterArn) }));
  if (!result.QueueUrl) throw new CronfenceError(`CreateQueue ${queueName} returned no URL`);
  return result.QueueUrl;
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const result = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = result.Attributes?.QueueArn;
  if (!arn) throw new CronfenceError(`queue ${url} has no ARN`);
  return arn;
}

async function ensureEventBus(events: EventBridgeClient, busName: string): Promise<void> {
  try {
    await events.send(new CreateEventBusCommand({ Name: busName }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
}

function keySchema(partitionKey: string, sortKey: string | undefined) {
  return [
    { AttributeName: partitionKey, KeyType: 'HASH' as const },
    ...(sortKey ? [{ AttributeName: sortKey, KeyType: 'RANGE' as const }] : []),
  ];
}
