/**
 * A failing handler is retried with backoff and then dead-lettered; a handler
 * that fails once is retried and committed on the second fence. Real worker
 * (SqsPoller + createWorkerHandler) over the emulator's SQS and DynamoDB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { LifecycleEvent } from '../../lib/core/events.ts';
import { SliceStatus, type SliceKey } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry, type JobHandler } from '../../lib/engine/define-job.ts';
import { createWorkerHandler, type HandlerLog } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

const POLICIES = { maxAttempts: 3, backoffBaseMs: 200, backoffMaxMs: 400, leaseMs: 2000, heartbeatMs: 500 };

let installation: TestInstallation;
let worker: RunningWorker;
/** Runs of each handler, by execution key. */
const runs = new Map<string, { attempt: number; fence: number }[]>();

/** Fails on every attempt. */
const alwaysFails = defineJob('always-fails', async (ctx) => {
  record(ctx.executionKey, ctx.attempt, ctx.fence);
  throw new Error('boom');
});

/** Fails on its first run for a slice, succeeds on the next. */
const failsOnce = defineJob('fails-once', async (ctx) => {
  if (record(ctx.executionKey, ctx.attempt, ctx.fence) === 1) throw new Error('transient');
});

function record(key: string, attempt: number, fence: number): number {
  const list = runs.get(key) ?? [];
  runs.set(key, [...list, { attempt, fence }]);
  return list.length + 1;
}

interface RunningWorker {
  readonly errors: string[];
  stop(): Promise<void>;
}

/**
 * A real worker: the Lambda handler behind the local SQS poller, on this
 * installation's work queue. One for the whole file: a stopped poller's
 * aborted long poll can still take a message the next test sends, hiding it
 * for the queue's visibility timeout.
 */
function startWorker(workerId: string, handlers: JobHandler[]): RunningWorker {
  const errors: string[] = [];
  const log: HandlerLog = {
    error: (message, details) => errors.push(`${message} ${JSON.stringify(details)}`),
    info: () => {},
  };
  const poller = new SqsPoller({
    sqs: installation.runtime.clients.sqs,
    queueUrl: installation.resources.queueUrls.work,
    handler: createWorkerHandler(installation.runtime, workerId, new HandlerRegistry(handlers), log),
    waitTimeSeconds: 1,
    onError: (error) => errors.push(`poller: ${String(error)}`),
  });
  const running = poller.run();
  return {
    errors,
    async stop() {
      poller.stop();
      await running;
    },
  };
}

beforeAll(async () => {
  installation = await createTestInstallation();
  worker = startWorker('w1', [alwaysFails, failsOnce]);
});

afterAll(async () => {
  await worker?.stop();
  installation?.destroy();
});

function eventsOf(key: SliceKey): LifecycleEvent[] {
  const wanted = executionKey(key.jobId, key.scheduledAt);
  return installation.events.events.filter((event) => event.executionKey === wanted);
}

/** Drains the dead-letter queue until a record matching `match` shows up; returns every parsed body seen. */
async function deadLetterBodies(match: (body: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  return eventually(async () => {
    const messages = await installation.receive(installation.resources.queueUrls.deadLetter, 10, 60);
    for (const message of messages) seen.push(JSON.parse(message.Body ?? 'null') as Record<string, unknown>);
    return seen.some(match) ? seen : undefined;
  }, 15_000);
}

describe('retries and dead-lettering', () => {
  it('retries a failing handler with backoff, then records it DEAD and dead-letters it', async () => {
    const knownHandlers = ['always-fails'];
    const { key } = await enqueuedSlice(
      installation,
      { id: 'always-fails-job', handler: 'always-fails', policies: POLICIES },
      wholeSecond(),
      knownHandlers,
    );
    const expectedKey = executionKey(key.jobId, key.scheduledAt);
    await installation.runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    await eventually(() => eventsOf(key).find((event) => event.type === 'dead'), 30_000);

    const events = eventsOf(key);
    const failed = events.filter((event) => event.type === 'failed');
    expect(failed.map((event) => event.attempt)).toEqual([1, 2]);
    for (const event of failed) {
      expect(event.retryAt, `failed event of attempt ${event.attempt} has a retryAt`).toMatch(
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
      );
      // The retry is due within the backoff ceiling (full jitter: below 200 ms after attempt 1, 400 ms after attempt 2)
      // of the failure; the event is emitted after the failure was recorded, so retryAt - at is at most the delay.
      const delay = Date.parse(event.retryAt ?? '') - Date.parse(event.at);
      expect(delay).toBeLessThan(event.attempt === 1 ? 200 : 400);
      expect(event.error).toContain('boom');
    }
    // Each claim (one per attempt) bumps the fence, and no retry is claimed before its backoff has passed.
    expect(failed.map((event) => event.fence)).toEqual([1, 2]);
    const claimed = events.filter((event) => event.type === 'claimed');
    expect(claimed.map((event) => [event.attempt, event.fence])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    for (const [index, failure] of failed.entries()) {
      expect(Date.parse(claimed[index + 1]?.at ?? '')).toBeGreaterThanOrEqual(Date.parse(failure.retryAt ?? ''));
    }
    const dead = events.filter((event) => event.type === 'dead');
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ attempt: 3, fence: 3, worker: 'w1', executionKey: expectedKey });
    expect(dead[0]?.error).toContain('boom');
    // The dead event comes after both failures.
    expect(events.indexOf(dead[0]!)).toBeGreaterThan(events.indexOf(failed[1]!));
    expect(events.filter((event) => event.type === 'committed')).toEqual([]);
    expect(runs.get(expectedKey)).toEqual([
      { attempt: 1, fence: 1 },
      { attempt: 2, fence: 2 },
      { attempt: 3, fence: 3 },
    ]);

    const slice = await installation.runtime.slices.get(key);
    expect(slice?.status).toBe(SliceStatus.Dead);
    expect(slice?.attempts).toBe(3);
    expect(slice?.lastError).toContain('boom');

    const ledger = await installation.runtime.slices.getLedger(key);
    expect(ledger).toMatchObject({ executionKey: expectedKey, outcome: 'DEAD', fence: 3, owner: 'w1' });
    expect(ledger?.error).toContain('boom');

    const dlq = await deadLetterBodies((body) => body.kind === 'dead-slice' && body.executionKey === expectedKey);
    const deadLetter = dlq.find((body) => body.kind === 'dead-slice' && body.executionKey === expectedKey);
    expect(deadLetter).toMatchObject({
      kind: 'dead-slice',
      executionKey: expectedKey,
      jobId: key.jobId,
      scheduledAt: key.scheduledAt,
      attempts: 3,
    });
    expect(String(deadLetter?.error)).toContain('boom');
    expect(dlq.filter((body) => body.executionKey === expectedKey)).toHaveLength(1);

    await eventually(async () => ((await installation.depth(installation.resources.queueUrls.work)) === 0 ? true : undefined), 15_000);
    expect(worker.errors).toEqual([]);
  });

  it('commits a handler that fails once on its second attempt, with fence 2', async () => {
    const knownHandlers = ['fails-once'];
    const { key } = await enqueuedSlice(
      installation,
      { id: 'fails-once-job', handler: 'fails-once', policies: POLICIES },
      wholeSecond(),
      knownHandlers,
    );
    const expectedKey = executionKey(key.jobId, key.scheduledAt);
    await installation.runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    await eventually(() => eventsOf(key).find((event) => event.type === 'committed'), 30_000);

    expect(runs.get(expectedKey)).toEqual([
      { attempt: 1, fence: 1 },
      { attempt: 2, fence: 2 },
    ]);
    const events = eventsOf(key);
    expect(events.filter((event) => event.type === 'failed').map((event) => event.attempt)).toEqual([1]);
    expect(events.filter((event) => event.type === 'dead')).toEqual([]);
    const committed = events.filter((event) => event.type === 'committed');
    expect(committed).toHaveLength(1);
    expect(committed[0]).toMatchObject({ fence: 2, attempt: 2, worker: 'w1' });

    const slice = await installation.runtime.slices.get(key);
    expect(slice?.status).toBe(SliceStatus.Succeeded);
    expect(slice?.fence).toBe(2);
    expect(slice?.attempts).toBe(2);

    const ledger = await installation.runtime.slices.getLedger(key);
    expect(ledger).toMatchObject({ executionKey: expectedKey, outcome: 'SUCCEEDED', fence: 2, owner: 'w1' });

    await eventually(async () => ((await installation.depth(installation.resources.queueUrls.work)) === 0 ? true : undefined), 15_000);
    expect(worker.errors).toEqual([]);
  });
});
