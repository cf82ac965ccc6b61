/**
 * The drill's client-boundary faults against the emulator: a throttled try is
 * refused before it is sent (so a call whose every try was refused wrote
 * nothing, and the server saw only the tries that were let through), and a
 * hung try meets the client's real request timeout.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { sliceKeyItem } from '../../lib/aws/dynamo/items.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancellationCodes } from '../../lib/aws/dynamo/errors.ts';
import { RequestMeter as RequestCounter } from '../../tools/meter/request-meter.ts';
import { createAwsClients, destroyAwsClients, type AwsClients } from '../../lib/aws/clients.ts';
import { HangServer, injectClientFaults } from '../../tools/chaos/chaos-clients.ts';
import type { FaultKind } from '../../tools/chaos/config.ts';
import { SeededRandom } from '../../tools/chaos/random.ts';
import { businessRow, createBusinessTable } from '../support/business-table.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
let table: string;

beforeAll(async () => {
  installation = await createTestInstallation();
  table = await createBusinessTable(installation, 'faulted');
});

afterAll(() => installation.destroy());

function faultedClients(
  config: { throttleRate: number; hangRate: number },
  hangServer?: HangServer,
): { clients: AwsClients; faults: FaultKind[]; counter: RequestCounter } {
  const clients = createAwsClients();
  const faults: FaultKind[] = [];
  injectClientFaults(clients, { config, random: new SeededRandom(21), report: (fault) => faults.push(fault), hangServer });
  return { clients, faults, counter: new RequestCounter().attach(clients) };
}

describe('throttle at the client boundary', () => {
  it(
    'refuses 1 to 3 tries of every call before they are sent: the SDK retries, and a call refused on every try wrote nothing',
    { timeout: 60_000 },
    async () => {
      const { clients, faults, counter } = faultedClients({ throttleRate: 1, hangRate: 0 });
      const outcomes: { id: string; error?: Error }[] = [];
      try {
        for (let i = 0; i < 16; i++) {
          const id = `put-${i}`;
          const error = await clients.dynamo.send(new PutItemCommand({ TableName: table, Item: { id: { S: id } } })).then(
            () => undefined,
            (e: Error) => e,
          );
          outcomes.push({ id, error });
        }
      } finally {
        destroyAwsClients(clients);
      }
      const refused = outcomes.filter((o) => o.error);
      expect(faults).toEqual(outcomes.map(() => 'throttle'));
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.length).toBeLessThan(outcomes.length);
      for (const { error } of refused) expect(['ThrottlingException', 'InternalServerError']).toContain(error?.name);
      for (const { id, error } of outcomes) expect(await businessRow(installation, table, id)).toEqual(error ? undefined : { id });
      // Only the calls that went through reached the server, each once.
      expect(counter.counts['dynamo.PutItem']).toBe(outcomes.length - refused.length);
    },
  );

  it(
    'ties each fault to the slice its request is about: a DynamoDB key, the item it puts, or the receipt handle of a received work message',
    { timeout: 60_000 },
    async () => {
      const clients = createAwsClients();
      const faults: { fault: FaultKind; slice?: string }[] = [];
      const workQueue = installation.resources.queueUrls.work;
      const key = { jobId: 'tied', scheduledAt: Date.parse('2026-12-01T10:00:00Z') };
      await installation.runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
      const received = await eventually(async () => (await installation.receive(workQueue, 1))[0]);
      // Let the receive go first (it ties the handle), then every call is throttled once.
      await installation.runtime.workQueue.hide(received.ReceiptHandle!, 0);
      injectClientFaults(clients, {
        config: { throttleRate: 1, hangRate: 0 },
        random: new SeededRandom(5),
        report: (fault, slice) => faults.push({ fault, slice }),
      });
      try {
        const message = await eventually(
          async () => (await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: workQueue, MaxNumberOfMessages: 1 }))).Messages?.[0],
        );
        await clients.sqs
          .send(new ChangeMessageVisibilityCommand({ QueueUrl: workQueue, ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 5 }))
          .catch(() => undefined);
        await clients.dynamo
          .send(new GetItemCommand({ TableName: installation.runtime.config.slicesTable, Key: sliceKeyItem(key) }))
          .catch(() => undefined);
        // A first claim puts the slice, with no Key to name it by.
        const claimed = { jobId: 'tied', scheduledAt: Date.parse('2026-12-01T10:01:00Z') };
        await clients.dynamo
          .send(
            new PutItemCommand({
              TableName: installation.runtime.config.slicesTable,
              Item: { ...sliceKeyItem(claimed), status: { S: 'RUNNING' } },
              ConditionExpression: 'attribute_not_exists(jobId)',
            }),
          )
          .catch(() => undefined);
        expect(faults.at(-1)).toEqual({ fault: 'throttle', slice: executionKey(claimed.jobId, claimed.scheduledAt) });
      } finally {
        destroyAwsClients(clients);
      }
      const tied = executionKey(key.jobId, key.scheduledAt);
      expect(faults.filter((f) => f.slice === tied).length).toBeGreaterThanOrEqual(2);
      expect(faults.at(-2)).toEqual({ fault: 'throttle', slice: tied });
      expect(faults.at(-3)).toEqual({ fault: 'throttle', slice: tied });
    },
  );

  it(
    'answers some transactions with a cancellation naming one item ThrottlingError, which the SDK does not retry and which wrote nothing',
    { timeout: 60_000 },
    async () => {
      const { clients } = faultedClients({ throttleRate: 1, hangRate: 0 });
      const codes: (string | undefined)[][] = [];
      try {
        for (let i = 0; i < 12; i++) {
          const ids = [`tx-${i}-a`, `tx-${i}-b`];
          const error = await clients.dynamo
            .send(
              new TransactWriteItemsCommand({ TransactItems: ids.map((id) => ({ Put: { TableName: table, Item: { id: { S: id } } } })) }),
            )
            .then(
              () => undefined,
              (e: unknown) => e,
            );
          const cancelled = cancellationCodes(error);
          if (cancelled) {
            codes.push(cancelled);
            for (const id of ids) expect(await businessRow(installation, table, id)).toBeUndefined();
          }
        }
      } finally {
        destroyAwsClients(clients);
      }
      expect(codes.length).toBeGreaterThan(0);
      for (const cancelled of codes) {
        expect(cancelled).toHaveLength(2);
        expect(cancelled.filter((code) => code !== undefined)).toEqual(['ThrottlingError']);
      }
    },
  );
});

describe('hang at the client boundary', () => {
  it('sends the try to a server that never answers, so the client’s own request timeout fails it, and nothing is written', async () => {
    const hangServer = await new HangServer().start();
    // One try and a short timeout keep the test short; the drill's clients keep their 3 s and 3 tries.
    const dynamo = new DynamoDBClient({
      region: process.env.AWS_REGION ?? 'us-east-1',
      maxAttempts: 1,
      requestHandler: { requestTimeout: 400, throwOnRequestTimeout: true },
    });
    const faults: FaultKind[] = [];
    injectClientFaults(
      { dynamo, sqs: installation.runtime.clients.sqs },
      { config: { throttleRate: 0, hangRate: 1 }, random: new SeededRandom(3), report: (f) => faults.push(f), hangServer },
    );
    const started = Date.now();
    try {
      const error = await dynamo.send(new PutItemCommand({ TableName: table, Item: { id: { S: 'hung' } } })).then(
        () => undefined,
        (e: Error) => e,
      );
      const elapsed = Date.now() - started;
      expect(error?.name).toBe('TimeoutError');
      expect(elapsed).toBeGreaterThanOrEqual(380);
      expect(elapsed).toBeLessThan(3000);
    } finally {
      dynamo.destroy();
      await hangServer.close();
    }
    expect(faults).toEqual(['hang']);
    expect(await businessRow(installation, table, 'hung')).toBeUndefined();
  });
});
