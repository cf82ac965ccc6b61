/**
 * The settlement takeover, against the emulator: worker A runs the
 * 1,200-merchant settlement and is paused mid-batch (its chunk commit, lease
 * renewals and message extensions all hang, as in a stopped process); its
 * message comes back, standby B claims and resumes at the checkpoint; then A
 * wakes and its late chunk goes out. An outbox dispatcher delivers the wires
 * to a mock bank with faults throughout. Returns what happened, for the test
 * to judge.
 */
import { CreateTableCommand, waitUntilTableExists, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createTableInput } from '../../lib/aws/bootstrap.ts';
import { WORK_QUEUE } from '../../lib/aws/schema.ts';
import { verifyChunks } from '../../lib/aws/verify-chunks.ts';
import type { ChunkAuditReport } from '../../lib/core/chunk-audit.ts';
import type { ChunkCommitOutcome, ChunkCommitRequest, ChunkRecord, ChunkStore, OutboxItem } from '../../lib/core/chunks.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { SliceStore, WorkQueue } from '../../lib/core/ports.ts';
import type { Slice, SliceKey } from '../../lib/core/slice.ts';
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { OutboxDispatcher } from '../../lib/engine/outbox-dispatcher.ts';
import { Worker, type ReceivedMessage } from '../../lib/engine/worker.ts';
import { PAYOUTS_TABLE } from '../../examples/jobs/examples.ts';
import { merchantSettlement } from '../../examples/jobs/settlement.ts';
import { readPatiently } from '../../tools/chaos/drill-stores.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { reportingChunks } from '../../tools/chaos/settlement-chunks.ts';
import type { TestInstallation } from './harness.ts';
import { gate } from './memory-engine.ts';
import { enqueuedSlice, wholeSecond } from './slices.ts';

export interface SettlementRun {
  readonly key: SliceKey;
  readonly slice: Slice | undefined;
  readonly chunks: ChunkRecord[];
  readonly payouts: Record<string, unknown>[];
  readonly outbox: OutboxItem[];
  readonly bank: MockBank;
  /** What A's paused chunk commit came to once A woke. */
  readonly late: { readonly chunk: number; readonly outcome?: ChunkCommitOutcome; readonly error?: unknown };
  /** B's chunk outcomes, by chunk. */
  readonly standbyChunks: ReadonlyMap<number, ChunkCommitOutcome>;
  /** What the standby's message processing threw (a store timeout, say); the message came back. */
  readonly standbyErrors: readonly string[];
  /** A's last lease renewal → B's claim, ms. */
  readonly failoverMs: number;
  /** When B claimed (epoch ms). */
  readonly takeoverAt: number;
  readonly elapsedMs: number;
  /** Start → slice SUCCEEDED, ms. */
  readonly succeededAfterMs: number;
  /** `cronfence verify`'s check of the chunks table over this execution. */
  readonly verified: ChunkAuditReport;
}

export interface SettlementScenarioOptions {
  readonly jobId: string;
  /** The chunk at which A pauses. */
  readonly pauseAt: number;
  /** Wraps A's chunk store (the unfenced variant). */
  readonly wrapZombieChunks?: (store: ChunkStore) => ChunkStore;
  /** B commits no chunk until A's late chunk settled (so the race of the two is decided one way). */
  readonly standbyWaitsForZombie?: boolean;
  /** How long after B's claim A wakes. @default 0 */
  readonly zombieWakesAfterMs?: number;
  /** Wires through the outbox to the mock bank too. @default true */
  readonly wires?: boolean;
}

const POLICIES = { leaseMs: 4000, heartbeatMs: 1000, timeoutMs: 120_000, maxAttempts: 5 };

export async function createPayoutsTable(installation: TestInstallation): Promise<string> {
  const tableName = `${installation.prefix}-payouts`;
  const dynamo = installation.runtime.clients.dynamo;
  await dynamo.send(new CreateTableCommand(createTableInput(tableName, PAYOUTS_TABLE)));
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 60 }, { TableName: tableName });
  return tableName;
}

export async function runSettlementTakeover(installation: TestInstallation, options: SettlementScenarioOptions): Promise<SettlementRun> {
  const started = Date.now();
  const { runtime } = installation;
  const workUrl = installation.resources.queueUrls.work;
  let seed = 12;
  const bank = await new MockBank({
    unavailableRate: 0.05,
    dropAfterBookingRate: 0.05,
    random: () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646,
  }).start();
  const dispatching = new AbortController();
  const dispatcher = new OutboxDispatcher({
    store: runtime.outbox,
    clock: systemClock,
    backoff: { baseMs: 50, maxMs: 500 },
    takeMs: 2000,
    concurrency: 8,
    deadLetters: runtime.deadLetters,
    onError: (error, context) => console.warn(`dispatcher ${context}: ${String(error)}`),
  });
  const dispatcherDone = dispatcher.run(dispatching.signal, 200, 200);
  try {
    const scheduledAt = wholeSecond(-1000);
    const { key } = await enqueuedSlice(
      installation,
      {
        id: options.jobId,
        schedule: '0 0 6 1 * *',
        timeZone: 'Asia/Kolkata',
        handler: merchantSettlement.name,
        payload: { merchants: 1200, ...(options.wires !== false && { bankUrl: bank.url }), chunkWorkMs: 10 },
        policies: POLICIES,
      },
      scheduledAt,
      [merchantSettlement.name],
    );
    await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    const handlers = new HandlerRegistry([merchantSettlement]);

    // Worker A, paused at chunk `pauseAt`.
    const wake = gate();
    const reachedPause = gate();
    let paused = false;
    const late: { chunk: number; outcome?: ChunkCommitOutcome; error?: unknown } = { chunk: options.pauseAt };
    const lateSettled = gate();
    const zombieChunks = (options.wrapZombieChunks ?? ((store: ChunkStore) => store))(runtime.chunks);
    const pausedChunks: ChunkStore = {
      committedChunks: (k) => runtime.chunks.committedChunks(k),
      async commitChunk(request: ChunkCommitRequest) {
        if (request.chunk < options.pauseAt) return zombieChunks.commitChunk(request);
        paused = true;
        reachedPause.open();
        await wake.opened;
        try {
          late.outcome = await zombieChunks.commitChunk({ ...request, now: Date.now() });
          return late.outcome;
        } catch (error) {
          late.error = error;
          throw error;
        } finally {
          lateSettled.open();
        }
      },
    };
    const hangWhilePaused = <T extends object>(target: T, methods: (keyof T)[]): T =>
      Object.assign(
        Object.create(target) as T,
        Object.fromEntries(
          methods.map((method) => [
            method,
            async (...args: unknown[]) => {
              if (paused) await wake.opened;
              return (target[method] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            },
          ]),
        ),
      );
    let lastRenewalByA = 0;
    let claimedByA = 0;
    const workerA = new Worker({
      workerId: 'worker-a',
      slices: renewalsSeen(hangWhilePaused<SliceStore>(runtime.slices, ['renew']), (at) => (lastRenewalByA = at)),
      jobs: runtime.jobReader,
      chunks: pausedChunks,
      queue: hangWhilePaused<WorkQueue>(runtime.workQueue, ['hide']),
      deadLetters: runtime.deadLetters,
      events: {
        emit: (event) => {
          if (event.type === 'claimed') claimedByA = Date.now();
          installation.events.emit(event);
        },
      },
      clock: systemClock,
      handlers,
    });
    // Received as the poller receives: with the queue's own visibility (3 s), which A's heartbeats would extend.
    let first: Awaited<ReturnType<TestInstallation['receive']>>[number] | undefined;
    while (first === undefined) [first] = await installation.receive(workUrl, 1, WORK_QUEUE.visibilityTimeoutSeconds);
    const runA = workerA.process(received(first));
    await reachedPause.opened;

    // Standby B: takes the message when it comes back, and resumes.
    const standbyChunks = new Map<number, ChunkCommitOutcome>();
    const standbyErrors: string[] = [];
    let takeoverAt = 0;
    const standbyStore: ChunkStore = options.standbyWaitsForZombie
      ? {
          committedChunks: (k) => runtime.chunks.committedChunks(k),
          commitChunk: async (request) => (await lateSettled.opened, runtime.chunks.commitChunk(request)),
        }
      : runtime.chunks;
    const workerB = new Worker({
      workerId: 'worker-b',
      // The standby's chunk outcomes, read at its ports as the drill reads them.
      ...reportingChunks({ slices: runtime.slices, chunks: standbyStore }, (chunk) => {
        if (chunk.outcome !== 'refused') standbyChunks.set(chunk.chunk, chunk.outcome);
      }),
      jobs: runtime.jobReader,
      queue: runtime.workQueue,
      deadLetters: runtime.deadLetters,
      events: {
        emit: (event) => {
          installation.events.emit(event);
          if (event.type === 'claimed' && event.worker === 'worker-b' && takeoverAt === 0) {
            takeoverAt = Date.now();
            setTimeout(() => wake.open(), options.zombieWakesAfterMs ?? 0);
          }
        },
      },
      clock: systemClock,
      handlers,
    });
    // As the SQS event source would: a message whose processing threw comes back later (errors are counted, not fatal).
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && (await runtime.slices.get(key).catch(() => undefined))?.status !== 'SUCCEEDED') {
      const messages = await installation.receive(workUrl, 10, WORK_QUEUE.visibilityTimeoutSeconds).catch(() => []);
      for (const message of messages) {
        try {
          const disposition = await workerB.process(received(message));
          if (disposition === 'delete')
            await runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: workUrl, ReceiptHandle: message.ReceiptHandle }));
        } catch (error) {
          standbyErrors.push(String(error));
        }
      }
    }
    const succeededAfterMs = Date.now() - started;
    await runA.catch(() => 'keep');
    await lateSettled.opened;
    const id = executionKey(key.jobId, key.scheduledAt);
    // About 100 s alone (the emulator serialises DynamoDB); up to 300 s while CI runs other test files beside it.
    const outbox =
      options.wires === false ? [] : await waitForDeliveries(bank, runtime.outbox.list.bind(runtime.outbox), id, 1200, 300_000);
    return {
      key,
      slice: await readPatiently(() => runtime.slices.get(key)),
      chunks: await readPatiently(() => runtime.chunks.committedChunks(key)),
      payouts: (await readPatiently(() => scanAll(installation, `${installation.prefix}-payouts`))).filter((row) =>
        String(row.payoutId).startsWith(id),
      ),
      outbox,
      bank,
      late,
      standbyChunks,
      standbyErrors,
      failoverMs: takeoverAt - Math.max(lastRenewalByA, claimedByA),
      succeededAfterMs,
      verified: await readPatiently(() =>
        verifyChunks(runtime.clients.dynamo, runtime.config, {
          since: key.scheduledAt,
          until: key.scheduledAt + 1000,
          jobId: key.jobId,
          now: Date.now(),
          graceMs: 120_000,
        }),
      ),
      takeoverAt,
      elapsedMs: Date.now() - started,
    };
  } finally {
    dispatching.abort();
    await dispatcherDone;
    await bank.close();
  }
}

function received(message: {
  Body?: string;
  ReceiptHandle?: string;
  MessageId?: string;
  Attributes?: Record<string, string>;
}): ReceivedMessage {
  return {
    body: message.Body ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    messageId: message.MessageId,
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
  };
}

/**
 * Waits until the bank booked `count` wires, then until the outbox records every delivery. Listing all 1,200 items
 * takes the emulator seconds under load, and it serves DynamoDB one request at a time: polled every 250 ms, the
 * listing itself slowed the dispatcher and the takeover it waits on.
 */
async function waitForDeliveries(
  bank: MockBank,
  list: (id: string) => Promise<OutboxItem[]>,
  id: string,
  count: number,
  timeoutMs: number,
): Promise<OutboxItem[]> {
  const deadline = Date.now() + timeoutMs;
  while (bank.booked.size < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  for (;;) {
    const items = await list(id).catch(() => []);
    if ((items.length >= count && items.every((item) => item.status !== 'PENDING')) || Date.now() > deadline) return items;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function scanAll(installation: TestInstallation, tableName: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await installation.runtime.clients.dynamo.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
    );
    rows.push(...(page.Items ?? []).map((item) => unmarshall(item)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

/** `store`, telling `onRenewed` the time of each renewal it accepted. */
function renewalsSeen(store: SliceStore, onRenewed: (at: number) => void): SliceStore {
  return Object.assign(Object.create(store) as SliceStore, {
    async renew(...args: Parameters<SliceStore['renew']>): Promise<void> {
      await store.renew(...args);
      onRenewed(args[1]);
    },
  });
}
