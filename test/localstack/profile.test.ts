/**
 * The CRONFENCE_EMULATOR=localstack profile is what it says: SQS and
 * EventBridge from LocalStack (AWS_ENDPOINT_URL), DynamoDB from our moto
 * (AWS_ENDPOINT_URL_DYNAMODB), LocalStack's own DynamoDB (Amazon's DynamoDB
 * Local) never loaded, and child processes see the same split. Run by
 * npm run test:localstack (kept out of npm test, which runs on moto).
 */
import { execFileSync } from 'node:child_process';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

describe('the LocalStack profile', () => {
  let installation: TestInstallation;
  beforeAll(async () => {
    if (process.env.CRONFENCE_EMULATOR !== 'localstack' || !process.env.AWS_ENDPOINT_URL_DYNAMODB) {
      throw new Error(
        'test/localstack needs the profile the global setup starts: CRONFENCE_EMULATOR=localstack with AWS_ENDPOINT_URL unset (npm run test:localstack)',
      );
    }
    installation = await createTestInstallation();
  });
  afterAll(() => installation?.destroy());

  it('serves SQS and EventBridge from LocalStack and nothing else', async () => {
    const response = await fetch(`${process.env.AWS_ENDPOINT_URL}/_localstack/health`);
    const health = (await response.json()) as { version: string; services: Record<string, string> };
    expect(health.version).toBe('4.14.0');
    expect(health.services.sqs).toBe('running');
    expect(health.services.events).toBe('running');
    expect(health.services.dynamodb).toBe('disabled');
  });

  it('hands out queue URLs on LocalStack and keeps the tables on moto', async () => {
    const { runtime, resources } = installation;
    const queue = await runtime.clients.sqs.send(new GetQueueUrlCommand({ QueueName: runtime.config.workQueueName }));
    expect(new URL(queue.QueueUrl!).origin).toBe(process.env.AWS_ENDPOINT_URL);
    // DescribeTable, not ListTables: the moto holds every file's tables, and ListTables answers 100 a page.
    const described = await runtime.clients.dynamo.send(new DescribeTableCommand({ TableName: resources.tables.slices }));
    expect(described.Table?.TableName).toBe(resources.tables.slices);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).not.toBe(process.env.AWS_ENDPOINT_URL);
  });

  it('passes both endpoints to child processes', () => {
    const seen = execFileSync(
      process.execPath,
      ['-e', 'console.log(JSON.stringify([process.env.AWS_ENDPOINT_URL, process.env.AWS_ENDPOINT_URL_DYNAMODB]))'],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(seen)).toEqual([process.env.AWS_ENDPOINT_URL, process.env.AWS_ENDPOINT_URL_DYNAMODB]);
  });
});
