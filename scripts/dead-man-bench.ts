/**
 * Measures the dead-man's switch (lib/aws/dead-man-watch.ts) over many jobs:
 * registers `--jobs` per-minute jobs directly in the jobs table (BatchWriteItem),
 * each but every `--silent-every`-th with its last minute's slot SUCCEEDED,
 * then runs the tick's steps with their defaults until one round over the
 * table has ended, and prints each step's requests and seconds.
 *
 *   npx tsx scripts/dead-man-bench.ts --jobs 100000 [--silent-every 100] [--jobs-per-run N] [--endpoint URL]
 *
 * The DynamoDB endpoint: --endpoint, else AWS_ENDPOINT_URL_DYNAMODB, else
 * AWS_ENDPOINT_URL, else a moto started for the run (docs/operations.md has
 * the figures).
 */
import { parseArgs } from 'node:util';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  waitUntilTableExists,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../lib/aws/bootstrap.ts';
import { DeadManWatch, type DeadManStep } from '../lib/aws/dead-man-watch.ts';
import { systemClock } from '../lib/core/clock.ts';
import { jobItem, toItem } from '../lib/aws/dynamo/items.ts';
import { JOBS_TABLE, SLICES_TABLE, WHEEL_TABLE } from '../lib/aws/schema.ts';
import { DEFAULT_POLICIES } from '../lib/core/job-spec.ts';
import { DEFAULT_DST_POLICY } from '../lib/core/schedule.ts';
import { startEmulator, type RunningEmulator } from '../lib/local/emulator.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    'silent-every': { type: 'string', default: '100' },
    'jobs-per-run': { type: 'string' },
    endpoint: { type: 'string' },
  },
});

function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
}

const jobCount = positiveInt('jobs', values.jobs);
const silentEvery = positiveInt('silent-every', values['silent-every']);
const jobsPerRun = values['jobs-per-run'] === undefined ? undefined : positiveInt('jobs-per-run', values['jobs-per-run']);

let emulator: RunningEmulator | undefined;
const endpoint =
  values.endpoint || process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL || (emulator = await startEmulator()).endpoint;
console.error(`dead-man-bench: DynamoDB at ${endpoint}${emulator ? ' (moto started for this run)' : ''}`);
const dynamo = new DynamoDBClient({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  maxAttempts: 3,
});
const requests = new Map<string, number>();
/** Seconds spent waiting on each operation (summed over concurrent requests). */
const waited = new Map<string, number>();
dynamo.middlewareStack.add(
  (next, context) => async (args) => {
    const op = (context.commandName ?? '?').replace('Command', '');
    requests.set(op, (requests.get(op) ?? 0) + 1);
    const started = performance.now();
    try {
      return await next(args);
    } finally {
      waited.set(op, (waited.get(op) ?? 0) + (performance.now() - started) / 1000);
    }
  },
  { step: 'initialize', name: 'countRequests' },
);

const prefix = `dmb${process.pid}`;
const config = { jobsTable: `${prefix}-jobs`, slicesTable: `${prefix}-slices`, wheelTable: `${prefix}-wheel`, deadManFactor: 2 };
try {
  for (const [name, table] of [
    [config.jobsTable, JOBS_TABLE],
    [config.slicesTable, SLICES_TABLE],
    [config.wheelTable, WHEEL_TABLE],
  ] as const) {
    await dynamo.send(new CreateTableCommand(createTableInput(name, table)));
    await waitUntilTableExists({ client: dynamo, maxWaitTime: 60 }, { TableName: name });
  }
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  const registered = await register(now);
  console.error(
    `registered ${jobCount} jobs and ${registered.slices} slices in ${registered.seconds.toFixed(1)} s (${registered.requests} BatchWriteItem requests)`,
  );

  const watch = new DeadManWatch(dynamo, config, systemClock, { ...(jobsPerRun !== undefined && { jobsPerRun }) });
  const steps: { step: DeadManStep; seconds: number; requests: Record<string, number>; waited: Record<string, number> }[] = [];
  do {
    requests.clear();
    waited.clear();
    const started = performance.now();
    const step = await watch.check(now);
    steps.push({
      step,
      seconds: (performance.now() - started) / 1000,
      requests: Object.fromEntries(requests),
      waited: Object.fromEntries(waited),
    });
  } while (!steps.at(-1)?.step.roundEnded);
  console.log(
    `jobs ${jobCount}, silent ${Math.ceil(jobCount / silentEvery)}; one round: ${steps.length} steps (the tick runs one a minute)`,
  );
  console.log('step  scanned  checked  stale  seconds  requests: by operation (seconds waited on it)');
  for (const [i, { step, seconds, requests: counted, waited: spent }] of steps.entries()) {
    const total = Object.values(counted).reduce((sum, n) => sum + n, 0);
    const detail = Object.entries(counted)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([op, n]) => `${op} ${n} (${(spent[op] ?? 0).toFixed(2)} s)`)
      .join(', ');
    console.log(
      `${String(i + 1).padStart(4)}  ${String(step.scanned).padStart(7)}  ${String(step.checked).padStart(7)}  ${String(step.stale.length).padStart(5)}  ${seconds.toFixed(2).padStart(7)}  ${total}: ${detail}`,
    );
  }
  const stale = steps.reduce((sum, { step }) => sum + step.stale.length, 0);
  const seconds = steps.map(({ seconds: s }) => s);
  console.log(
    `stale found ${stale} (expected ${Math.ceil(jobCount / silentEvery)}); step seconds max ${Math.max(...seconds).toFixed(2)}, round ${seconds.reduce((a, b) => a + b, 0).toFixed(1)} s`,
  );
} finally {
  await emulator?.stop();
}

/** Every job per minute, made an hour ago; all but every silentEvery-th with its latest minute's slot SUCCEEDED. */
async function register(now: number): Promise<{ slices: number; requests: number; seconds: number }> {
  const started = performance.now();
  const hourAgo = now - 3_600_000;
  const lastMinute = Math.floor(now / 60_000) * 60_000;
  let batch: { table: string; request: WriteRequest }[] = [];
  let slices = 0;
  let sent = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const byTable: Record<string, WriteRequest[]> = {};
    for (const { table, request } of batch) (byTable[table] ??= []).push(request);
    batch = [];
    let pending: Record<string, WriteRequest[]> | undefined = byTable;
    while (pending !== undefined && Object.keys(pending).length > 0) {
      sent++;
      const result = await dynamo.send(new BatchWriteItemCommand({ RequestItems: pending }));
      pending = result.UnprocessedItems as Record<string, WriteRequest[]> | undefined;
    }
  };
  for (let i = 0; i < jobCount; i++) {
    const id = `job-${String(i).padStart(7, '0')}`;
    const job = {
      id,
      schedule: '0 * * * * *',
      timeZone: 'UTC',
      dst: DEFAULT_DST_POLICY,
      handler: 'tick',
      enabled: true,
      policies: DEFAULT_POLICIES,
      shard: i % 16,
      nextFireAt: hourAgo,
      version: 1,
      generation: 1,
      createdAt: hourAgo,
      updatedAt: hourAgo,
    };
    batch.push({ table: config.jobsTable, request: { PutRequest: { Item: jobItem(job) } } });
    if (i % silentEvery !== 0) {
      slices++;
      const slice = {
        jobId: id,
        scheduledAt: lastMinute,
        status: 'SUCCEEDED',
        fence: 1,
        owner: 'w',
        attempts: 1,
        handler: 'tick',
        policies: DEFAULT_POLICIES,
        shard: i % 16,
        generation: 1,
        createdAt: lastMinute,
      };
      batch.push({ table: config.slicesTable, request: { PutRequest: { Item: toItem(slice) } } });
    }
    if (batch.length >= 24) await flush();
    if (i > 0 && i % 10_000 === 0) console.error(`  ${i} jobs registered`);
  }
  await flush();
  return { slices, requests: sent, seconds: (performance.now() - started) / 1000 };
}
