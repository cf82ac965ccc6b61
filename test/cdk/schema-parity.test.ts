/**
 * Local and cloud agree: the tables and queues the local bootstrap creates
 * in the emulator, read back with DescribeTable / GetQueueAttributes, match
 * the synthesized CloudFormation template field by field. The one intended
 * difference, the visibility timeout of a queue a Lambda consumes, is
 * asserted as max(schema, function timeout) (docs/cdk.md).
 */
import { DescribeTableCommand, DescribeTimeToLiveCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Duration } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHUNKS_TABLE,
  DEAD_LETTER_QUEUE,
  JOBS_TABLE,
  SCAN_QUEUE,
  SLICES_TABLE,
  WORK_QUEUE,
  type QueueDefinition,
  type TableDefinition,
} from '../../lib/aws/schema.ts';
import { effectiveVisibilitySeconds } from '../../lib/cdk/schema-resources.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { logicalIdOf, synthScheduler } from './synth.ts';

const { template, scheduler } = synthScheduler({ alarms: { enabled: false } });
const resources = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
const cloud = (construct: Table | Queue): Record<string, unknown> => {
  const resource = resources[logicalIdOf(construct)];
  if (!resource) throw new Error(`no resource for ${construct.node.path}`);
  return resource.Properties;
};

let local: TestInstallation;
beforeAll(async () => {
  local = await createTestInstallation();
});
afterAll(() => local?.destroy());

const tables: Array<[string, TableDefinition, () => Table]> = [
  ['jobs', JOBS_TABLE, () => scheduler.jobsTable],
  ['slices', SLICES_TABLE, () => scheduler.slicesTable],
  ['chunks', CHUNKS_TABLE, () => scheduler.chunksTable],
];

const byName = <T extends { AttributeName?: string }>(items: readonly T[]) =>
  [...items].sort((a, b) => String(a.AttributeName).localeCompare(String(b.AttributeName)));

/** A GSI as both sides can state it: name, key schema, projection. */
function normalIndex(index: {
  IndexName?: string;
  KeySchema?: unknown;
  Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
}) {
  return {
    IndexName: index.IndexName,
    KeySchema: index.KeySchema,
    Projection: {
      ProjectionType: index.Projection?.ProjectionType,
      ...(index.Projection?.NonKeyAttributes && { NonKeyAttributes: [...index.Projection.NonKeyAttributes].sort() }),
    },
  };
}

async function describeLocal(definition: TableDefinition): Promise<TableDescription> {
  const name = local.resources.tables[definition.logicalName];
  const described = await local.runtime.clients.dynamo.send(new DescribeTableCommand({ TableName: name }));
  if (!described.Table) throw new Error(`emulator has no table ${name}`);
  return described.Table;
}

describe('schema parity: emulator bootstrap vs synthesized template', () => {
  it.each(tables)('table %s has the same keys, attributes, indexes with projections, and billing', async (_name, definition, table) => {
    const emulated = await describeLocal(definition);
    const synthesized = cloud(table());
    expect(synthesized.KeySchema).toEqual(emulated.KeySchema);
    expect(byName(synthesized.AttributeDefinitions as { AttributeName: string }[])).toEqual(byName(emulated.AttributeDefinitions ?? []));
    const cloudIndexes = ((synthesized.GlobalSecondaryIndexes as object[] | undefined) ?? []).map(normalIndex);
    const localIndexes = (emulated.GlobalSecondaryIndexes ?? []).map(normalIndex);
    expect(cloudIndexes).toEqual(localIndexes);
    expect(cloudIndexes).toHaveLength(definition.globalSecondaryIndexes.length);
    expect(synthesized.BillingMode).toBe(emulated.BillingModeSummary?.BillingMode ?? 'PAY_PER_REQUEST');
  });

  it.each(tables)('table %s has the same time-to-live attribute', async (_name, definition, table) => {
    const name = local.resources.tables[definition.logicalName];
    const ttl = await local.runtime.clients.dynamo.send(new DescribeTimeToLiveCommand({ TableName: name }));
    const localTtl = ttl.TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED' ? ttl.TimeToLiveDescription.AttributeName : undefined;
    const cloudTtl = (cloud(table()).TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined)?.AttributeName;
    expect(cloudTtl).toBe(localTtl);
    expect(cloudTtl).toBe(definition.timeToLiveAttribute);
  });

  const queues: Array<[string, QueueDefinition, () => Queue, () => string, Duration | undefined]> = [
    ['dead-letter', DEAD_LETTER_QUEUE, () => scheduler.deadLetterQueue, () => local.resources.queueUrls.deadLetter, undefined],
    ['work', WORK_QUEUE, () => scheduler.workQueue, () => local.resources.queueUrls.work, scheduler.workerFunction.timeout],
    ['scan', SCAN_QUEUE, () => scheduler.scanQueue, () => local.resources.queueUrls.scan, scheduler.scannerFunction.timeout],
  ];

  it.each(queues)(
    'queue %s has the same retention, long poll and redrive maxReceiveCount',
    async (_name, definition, queue, url, consumerTimeout) => {
      const attributes =
        (await local.runtime.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url(), AttributeNames: ['All'] }))).Attributes ??
        {};
      const synthesized = cloud(queue());
      expect(synthesized.MessageRetentionPeriod).toBe(Number(attributes.MessageRetentionPeriod));
      expect(synthesized.ReceiveMessageWaitTimeSeconds).toBe(Number(attributes.ReceiveMessageWaitTimeSeconds));

      const localRedrive = attributes.RedrivePolicy
        ? (JSON.parse(attributes.RedrivePolicy) as { maxReceiveCount: number | string; deadLetterTargetArn: string })
        : undefined;
      const cloudRedrive = synthesized.RedrivePolicy as { maxReceiveCount: number; deadLetterTargetArn: unknown } | undefined;
      expect(cloudRedrive?.maxReceiveCount).toBe(localRedrive === undefined ? undefined : Number(localRedrive.maxReceiveCount));
      expect(cloudRedrive?.maxReceiveCount).toBe(definition.maxReceiveCount);
      if (localRedrive) {
        expect(localRedrive.deadLetterTargetArn.endsWith(`:${local.env.CRONFENCE_PREFIX}-${DEAD_LETTER_QUEUE.logicalName}`)).toBe(true);
        expect(cloudRedrive?.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [logicalIdOf(scheduler.deadLetterQueue), 'Arn'] });
      }

      // The intended difference: Lambda needs visibility >= function timeout; the emulator keeps the schema's failover timer.
      expect(Number(attributes.VisibilityTimeout)).toBe(definition.visibilityTimeoutSeconds);
      expect(synthesized.VisibilityTimeout).toBe(effectiveVisibilitySeconds(definition, consumerTimeout));
    },
  );
});
