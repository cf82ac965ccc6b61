/**
 * The drill's own store access: its tables before the run, and what the
 * stores hold after it (slices with their ledger records, business effects, dead letters, a
 * job's raw item, the wheel), read consistently, for the checker.
 */
import { CreateTableCommand, GetItemCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { bootstrap, createTableInput } from '../../lib/aws/bootstrap.ts';
import { toJobRecord } from '../../lib/aws/dynamo/items.ts';
import { scanAll } from '../../lib/aws/dynamo/read-pages.ts';
import { queueUrl } from '../../lib/aws/sqs/queue-urls.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { JobRecord } from '../../lib/core/job-record.ts';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import { isFinal, type Slice } from '../../lib/core/slice.ts';
import { bucketOf, WHEEL_BUCKET_MS } from '../../lib/core/wheel.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { EFFECTS_TABLE, effectsTableName } from './chaos-jobs.ts';
import type { DeadLetterEntry } from './observed.ts';
import type { Effect } from './outcomes.ts';

export async function prepareStores(runtime: Runtime, prefix: string): Promise<void> {
  await bootstrap(runtime.clients, runtime.config);
  const table = effectsTableName(prefix);
  await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(table, EFFECTS_TABLE)));
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: table });
}

/** The window the drill checks, and the latest start of an occurrence in it (its second plus its job's jitter offset). */
export interface DrainedWindow {
  readonly jobIds: readonly string[];
  readonly fromMs: number;
  readonly toMs: number;
  readonly startsBefore: number;
}

/**
 * Waits, until `timeoutMs` of real time passes, for every occurrence due in
 * the window to have had its chance to end: every shard's reconciler has
 * passed the window's last start (an occurrence whose message was lost has no
 * slice until the reconciler creates it), and no slice of the drill's jobs
 * scheduled in the window is live (a slice a claim created is not in the
 * sweep index: each job's slices are read).
 */
export async function drainWindow(runtime: Runtime, window: DrainedWindow, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const reconciledTo = bucketOf(window.startsBefore - 1) + WHEEL_BUCKET_MS;
  while (Date.now() < deadline) {
    let reconciled = true;
    for (let shard = 0; shard < runtime.config.shardCount && reconciled; shard++) {
      reconciled = ((await readPatiently(() => runtime.wheel.readCursor(shard)))?.reconciledThrough ?? 0) >= reconciledTo;
    }
    const live = reconciled
      ? (await readSlices(runtime, window.jobIds, window.fromMs)).filter(
          (slice) => slice.scheduledAt >= window.fromMs && slice.scheduledAt < window.toMs && !isFinal(slice.status),
        )
      : [];
    if (reconciled && live.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/**
 * A read sent again, up to five times, when it fails: the drill's own reads share the emulator with every replica,
 * and one that timed out (its SDK tries spent) must not end a 300 s drill (seen: a lifecycle change's read-back).
 */
export async function readPatiently<T>(read: () => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= tries) throw error;
    }
  }
}

/** A job's item as stored, tombstone included. */
export async function readJobRecord(runtime: Runtime, jobId: string): Promise<JobRecord | undefined> {
  const result = await readPatiently(() =>
    runtime.clients.dynamo.send(
      new GetItemCommand({ TableName: runtime.config.jobsTable, Key: { jobId: { S: jobId } }, ConsistentRead: true }),
    ),
  );
  return result.Item ? toJobRecord(result.Item) : undefined;
}

export async function readSlices(runtime: Runtime, jobIds: readonly string[], fromMs: number): Promise<Slice[]> {
  const all: Slice[] = [];
  for (const jobId of jobIds) all.push(...(await readPatiently(() => runtime.jobs().slicesOf(jobId, fromMs - 60_000))));
  return all;
}

export async function readEffects(runtime: Runtime, prefix: string): Promise<Effect[]> {
  return (await readPatiently(() => scanAll(runtime.clients.dynamo, { TableName: effectsTableName(prefix), ConsistentRead: true }))).map(
    (item) => unmarshall(item) as Effect,
  );
}

/** The wheel table as the drill left it (entry packs, inboxes, cursors), raw: a lost occurrence is traced in its chain. */
export async function readWheel(runtime: Runtime): Promise<Record<string, unknown>[]> {
  return (await readPatiently(() => scanAll(runtime.clients.dynamo, { TableName: runtime.config.wheelTable, ConsistentRead: true }))).map(
    (item) => unmarshall(item),
  );
}

/** Everything on the dead-letter queue (hidden for long enough to read it all once), by the slice each record names. */
export async function readDeadLetters(runtime: Runtime): Promise<DeadLetterEntry[]> {
  const url = await queueUrl(runtime.clients.sqs, runtime.config.deadLetterQueueName);
  const entries: DeadLetterEntry[] = [];
  for (let empty = 0; empty < 2;) {
    const { Messages = [] } = await runtime.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 600, WaitTimeSeconds: 1 }),
    );
    empty = Messages.length === 0 ? empty + 1 : 0;
    for (const message of Messages) {
      const entry = deadLetterEntry(message.Body ?? '');
      if (entry) entries.push(entry);
    }
  }
  return entries;
}

/** A dead-slice record names its key; a rejected message carries the body it rejected; a redriven one is a work message. */
export function deadLetterEntry(body: string): DeadLetterEntry | undefined {
  let parsed: { kind?: string; executionKey?: string; body?: string } | undefined;
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return undefined;
  }
  if (parsed?.kind === 'dead-slice' && parsed.executionKey) return { executionKey: parsed.executionKey, kind: 'dead-slice' };
  const work = parsed?.kind && parsed.body !== undefined ? parsed.body : body;
  try {
    const key = decodeWorkMessage(work);
    return { executionKey: executionKey(key.jobId, key.scheduledAt), kind: parsed?.kind ?? 'redriven' };
  } catch {
    return undefined;
  }
}
