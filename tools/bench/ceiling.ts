/**
 * The ceiling, measured in the same run: how fast the emulator accepts, from
 * one process at the burst's concurrency, the same number of plain
 * conditional writes and SendMessageBatch calls as the burst made. Our
 * end-to-end rate divided by this is the share of the raw rate cronfence's
 * protocol (fencing, ledger, reads, delays, processes) leaves.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, PutItemCommand, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { round } from './density.ts';

export interface CeilingOptions {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly prefix: string;
  readonly dynamoWrites: number;
  readonly sendBatches: number;
  readonly concurrency: number;
  readonly onProgress: (done: number, total: number) => void;
}

export interface CeilingResult {
  readonly dynamoWrites: number;
  readonly sendBatches: number;
  readonly concurrency: number;
  readonly seconds: number;
  readonly dynamoWritesPerSecond: number;
  readonly sendBatchesPerSecond: number;
}

export async function measureCeiling(options: CeilingOptions): Promise<CeilingResult> {
  const tableName = `${options.prefix}-ceiling`;
  await options.dynamo.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
  await waitUntilTableExists({ client: options.dynamo, maxWaitTime: 60 }, { TableName: tableName });
  const { QueueUrl: queueUrl } = await options.sqs.send(new CreateQueueCommand({ QueueName: `${options.prefix}-ceiling` }));
  const total = options.dynamoWrites + options.sendBatches;
  let done = 0;
  const run = async (count: number, lanes: number, request: (i: number) => Promise<unknown>): Promise<number> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(lanes, count)) }, async () => {
        while (next < count) {
          await request(next++);
          if (++done % 50 === 0) options.onProgress(done, total);
        }
      }),
    );
    return performance.now();
  };
  const body = 'x'.repeat(200);
  const started = performance.now();
  // Split the lanes in proportion to the two request counts, as the burst's mix has them in flight.
  const sqsLanes = Math.max(1, Math.round((options.concurrency * options.sendBatches) / Math.max(1, total)));
  const [writesDoneAt, sendsDoneAt] = await Promise.all([
    run(options.dynamoWrites, options.concurrency - sqsLanes, (i) =>
      options.dynamo.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: `${i}-${randomUUID()}` }, body: { S: body } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ),
    run(options.sendBatches, sqsLanes, (i) =>
      options.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `{"i":${i},"j":${j}}` })),
        }),
      ),
    ),
  ]);
  options.onProgress(total, total);
  const seconds = (Math.max(writesDoneAt, sendsDoneAt) - started) / 1000;
  return {
    dynamoWrites: options.dynamoWrites,
    sendBatches: options.sendBatches,
    concurrency: options.concurrency,
    seconds: round(seconds, 2),
    dynamoWritesPerSecond: round(options.dynamoWrites / ((writesDoneAt - started) / 1000), 1),
    sendBatchesPerSecond: round(options.sendBatches / ((sendsDoneAt - started) / 1000), 1),
  };
}
