/**
 * The emulators the launcher starts (lib/local/emulator.ts): DynamoDB in a
 * moto process of its own (AWS_ENDPOINT_URL_DYNAMODB), SQS and EventBridge in
 * another (AWS_ENDPOINT_URL: moto, or LocalStack on that profile), and in a
 * test run one DynamoDB moto per worker slot (test/setup/global-emulator.ts).
 * Why: one Python process serves on about one core, and on a slow 2-core
 * machine one process for everything displaced a healthy holder in the CI
 * drill and timed out single requests beside a loaded file.
 */
import { DescribeTableCommand, DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

describe('the emulator processes', () => {
  let installation: TestInstallation;
  beforeAll(async () => {
    if (!inject('emulatorSlots')) {
      throw new Error(
        'this file checks the emulators the test run starts itself: run it with AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_DYNAMODB unset',
      );
    }
    installation = await createTestInstallation();
  });
  afterAll(() => installation?.destroy());

  it('serves DynamoDB from a process apart from the one serving SQS and EventBridge', async () => {
    const dynamoEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    expect(dynamoEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(dynamoEndpoint).not.toBe(process.env.AWS_ENDPOINT_URL);
    const { runtime, resources } = installation;
    // The runtime's own client, configured by the environment alone, finds its tables on the DynamoDB process.
    // (DescribeTable, not ListTables: a slot's moto holds every file's tables, and ListTables answers 100 a page.)
    const described = await runtime.clients.dynamo.send(new DescribeTableCommand({ TableName: resources.tables.slices }));
    expect(described.Table?.TableName).toBe(resources.tables.slices);
    if (process.env.CRONFENCE_EMULATOR === 'localstack') {
      const health = (await (await fetch(`${process.env.AWS_ENDPOINT_URL}/_localstack/health`)).json()) as {
        services: Record<string, string>;
      };
      expect(health.services.sqs).toBe('running');
      return;
    }
    // On the moto profile the other process is a moto too, which would answer DynamoDB: it has none of the tables.
    const other = new DynamoDBClient({
      endpoint: process.env.AWS_ENDPOINT_URL,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      await expect(other.send(new DescribeTableCommand({ TableName: resources.tables.slices }))).rejects.toBeInstanceOf(
        ResourceNotFoundException,
      );
    } finally {
      other.destroy();
    }
  });

  it('gives this worker slot its own DynamoDB moto', () => {
    const slots = inject('emulatorSlots');
    expect(slots.length).toBeGreaterThanOrEqual(2);
    const endpoints = slots.map((slot) => slot.AWS_ENDPOINT_URL_DYNAMODB);
    expect(new Set(endpoints).size).toBe(slots.length);
    const poolId = Number(process.env.VITEST_POOL_ID);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(endpoints[(poolId - 1) % slots.length]);
  });
});
