/**
 * Checks that conditional writes on one item are atomic in the emulator.
 *
 *   npx tsx scripts/race-check.ts [--rounds 300] [--racers 32] [--endpoint URL]
 *
 * The DynamoDB endpoint: --endpoint, else AWS_ENDPOINT_URL_DYNAMODB, else
 * AWS_ENDPOINT_URL (the SDK's own order), else a moto started for the run.
 *
 * Each round puts {pk, status: 'IDLE'} and fires `racers` concurrent
 * UpdateItems conditioned on status = IDLE; exactly one may win. Prints
 * `rounds=N racers=M doubleWinnerRounds=K` and exits 1 if K > 0.
 */
import { parseArgs } from 'node:util';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { startEmulator, type RunningEmulator } from '../lib/local/emulator.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '300' },
    racers: { type: 'string', default: '32' },
    endpoint: { type: 'string' },
  },
});

function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
}

const rounds = positiveInt('rounds', values.rounds);
const racers = positiveInt('racers', values.racers);

let emulator: RunningEmulator | undefined;
const endpoint =
  values.endpoint || process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL || (emulator = await startEmulator()).endpoint;
console.error(`race-check: DynamoDB at ${endpoint}${emulator ? ' (moto started for this run)' : ''}`);

const client = new DynamoDBClient({
  endpoint,
  region: process.env.AWS_REGION ?? 'us-east-1',
  // An emulator takes any key; a caller's own credentials or profile (a real table) win.
  credentials:
    emulator || !(process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE) ? { accessKeyId: 'test', secretAccessKey: 'test' } : undefined,
  maxAttempts: 1,
  requestHandler: { httpAgent: { maxSockets: racers + 4 } },
});
const TableName = `race-check-${process.pid}-${Date.now()}`;

try {
  await client.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName });

  let doubleWinnerRounds = 0;
  for (let round = 0; round < rounds; round++) {
    const pk = { S: `round-${round}` };
    await client.send(new PutItemCommand({ TableName, Item: { pk, status: { S: 'IDLE' } } }));
    const results = await Promise.allSettled(
      Array.from({ length: racers }, (_, racer) =>
        client.send(
          new UpdateItemCommand({
            TableName,
            Key: { pk },
            ConditionExpression: '#s = :idle',
            UpdateExpression: 'SET #s = :running, winner = :racer',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: {
              ':idle': { S: 'IDLE' },
              ':running': { S: 'RUNNING' },
              ':racer': { N: String(racer) },
            },
          }),
        ),
      ),
    );
    let winners = 0;
    for (const result of results) {
      if (result.status === 'fulfilled') winners++;
      else if (!(result.reason instanceof ConditionalCheckFailedException)) throw result.reason;
    }
    if (winners !== 1) {
      if (winners > 1) doubleWinnerRounds++;
      console.error(`round ${round}: ${winners} winners`);
    }
  }

  console.log(`rounds=${rounds} racers=${racers} doubleWinnerRounds=${doubleWinnerRounds}`);
  process.exitCode = doubleWinnerRounds > 0 ? 1 : 0;
} finally {
  await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  client.destroy();
  await emulator?.stop();
}
