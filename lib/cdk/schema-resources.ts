/**
 * Pure builders from the one schema (lib/aws/schema.ts) to CDK props. The
 * local bootstrap builds CreateTable / CreateQueue requests from the same
 * definitions, so key schemas, indexes, projections, TTL and redrive cannot
 * drift between the emulator and the cloud (test/cdk/schema-parity.test.ts
 * proves it field by field).
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { IndexDefinition, KeyDefinition, QueueDefinition, TableDefinition } from '../aws/schema.ts';

export interface TableOptions {
  readonly removalPolicy: RemovalPolicy;
  readonly pointInTimeRecovery: boolean;
  /** DynamoDB deletion protection: the table refuses DeleteTable until it is turned off. @default false */
  readonly deletionProtection?: boolean;
  /** A customer managed key; AWS-owned encryption when undefined. */
  readonly encryptionKey?: kms.IKey;
  /** Throughput the table serves at once, bought ahead of a burst (warm throughput); a new on-demand table's otherwise. */
  readonly warmThroughput?: dynamodb.WarmThroughput;
}

function attribute(key: KeyDefinition): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}

/** The Table props for a definition (indexes are added by {@link addIndexes}). */
export function tableProps(table: TableDefinition, options: TableOptions): dynamodb.TableProps {
  return {
    partitionKey: attribute(table.partitionKey),
    ...(table.sortKey && { sortKey: attribute(table.sortKey) }),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    ...(table.timeToLiveAttribute && { timeToLiveAttribute: table.timeToLiveAttribute }),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: options.pointInTimeRecovery },
    removalPolicy: options.removalPolicy,
    ...(options.deletionProtection !== undefined && { deletionProtection: options.deletionProtection }),
    ...(options.warmThroughput && { warmThroughput: options.warmThroughput }),
    ...(options.encryptionKey
      ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: options.encryptionKey }
      : { encryption: dynamodb.TableEncryption.DEFAULT }),
  };
}

/** The GSI props for an index definition, projection included. */
export function indexProps(index: IndexDefinition): dynamodb.GlobalSecondaryIndexProps {
  const base = {
    indexName: index.indexName,
    partitionKey: attribute(index.partitionKey),
    ...(index.sortKey && { sortKey: attribute(index.sortKey) }),
  };
  switch (index.projection.type) {
    case 'ALL':
      return { ...base, projectionType: dynamodb.ProjectionType.ALL };
    case 'KEYS_ONLY':
      return { ...base, projectionType: dynamodb.ProjectionType.KEYS_ONLY };
    case 'INCLUDE':
      return { ...base, projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.projection.nonKeyAttributes] };
  }
}

/** Creates the table of a definition with all its indexes. */
export function schemaTable(scope: Construct, id: string, table: TableDefinition, options: TableOptions): dynamodb.Table {
  const created = new dynamodb.Table(scope, id, tableProps(table, options));
  // The shard-keyed indexes take a burst's index writes: they are warmed with the table.
  for (const index of table.globalSecondaryIndexes) {
    created.addGlobalSecondaryIndex({ ...indexProps(index), ...(options.warmThroughput && { warmThroughput: options.warmThroughput }) });
  }
  return created;
}

export interface QueueOptions {
  /**
   * The longest timeout of a function consuming the queue. AWS refuses an
   * event source mapping whose queue hides a message for less than the
   * function may run, so the queue's visibility is max(schema, this).
   */
  readonly consumerTimeout?: Duration;
  readonly deadLetterQueue?: sqs.IQueue;
  /** A customer managed key; SQS-managed encryption when undefined. */
  readonly encryptionKey?: kms.IKey;
}

/** The visibility timeout the construct gives a queue: the schema's failover timer, raised to the consumer's timeout. */
export function effectiveVisibilitySeconds(queue: QueueDefinition, consumerTimeout?: Duration): number {
  return Math.max(queue.visibilityTimeoutSeconds, consumerTimeout?.toSeconds() ?? 0);
}

/** The Queue props for a definition. */
export function queueProps(queue: QueueDefinition, options: QueueOptions): sqs.QueueProps {
  return {
    visibilityTimeout: Duration.seconds(effectiveVisibilitySeconds(queue, options.consumerTimeout)),
    retentionPeriod: Duration.seconds(queue.messageRetentionSeconds),
    receiveMessageWaitTime: Duration.seconds(queue.receiveMessageWaitTimeSeconds),
    ...(options.deadLetterQueue &&
      queue.maxReceiveCount !== undefined && {
        deadLetterQueue: { queue: options.deadLetterQueue, maxReceiveCount: queue.maxReceiveCount },
      }),
    enforceSSL: true,
    ...(options.encryptionKey
      ? { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: options.encryptionKey }
      : { encryption: sqs.QueueEncryption.SQS_MANAGED }),
  };
}
