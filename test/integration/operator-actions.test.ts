/**
 * Operator actions against the emulator, run by real workers polling the real
 * queue: a triggered slot runs once however often its request is retried (and
 * through the same claim, fence and ledger as a scheduled slice); a backfill
 * runs each past occurrence once, and again runs nothing; a timed pause
 * settles what was due and is taken up by the scanner at its end; the CDK
 * resource leaves runtime jobs alone; a group pauses and resumes as one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { InvalidOperatorRequestError, JobNotFoundError, JobOwnershipError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { onJobEvent } from '../../lib/lambda/jobs-resource.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { processInOrder, recordingRuntime } from '../support/recording-queue.ts';
import { wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

const YEARLY = '0 0 1 1 *';
const silent = { info: () => {}, error: () => {} };
const alice = { actor: 'alice', reason: 'test' };

/** Runs workers on the work queue until `done` holds. */
async function withWorkers(handlers: HandlerRegistry, done: () => Promise<boolean>): Promise<void> {
  const { runtime } = installation;
  const pollers = ['w1', 'w2'].map(
    (id) =>
      new SqsPoller({
        sqs: runtime.clients.sqs,
        queueUrl: installation.resources.queueUrls.work,
        handler: createWorkerHandler(runtime, id, handlers, silent),
        waitTimeSeconds: 1,
      }),
  );
  const running = pollers.map((poller) => poller.run());
  try {
    await eventually(async () => ((await done()) ? true : undefined), 30_000, 200);
  } finally {
    pollers.forEach((poller) => poller.stop());
    await Promise.all(running);
  }
}

describe('jobs trigger', () => {
  it('an extra slot with its own key, run once through claim, fence and ledger, however often the request is retried', async () => {
    const { runtime } = installation;
    await runtime.jobs(['pay']).put({ id: 'trig', schedule: YEARLY, handler: 'pay', payload: { amount: 1 } });
    const operator = runtime.operator();
    const first = await operator.trigger('trig', { ...alice, requestId: 'req-1', payload: '{"amount": 7}' });
    // The same request sent again, twice at once: the marker written with the slot admits one slot.
    const retries = await Promise.all([0, 1].map(() => operator.trigger('trig', { ...alice, requestId: 'req-1' })));
    const other = await operator.trigger('trig', { ...alice, requestId: 'req-2' });

    expect(first.created).toBe(true);
    expect(first.key.scheduledAt % 1000).not.toBe(0);
    expect(first.executionKey).toBe(executionKey('trig', first.key.scheduledAt));
    expect(retries.map((retry) => [retry.created, retry.key.scheduledAt])).toEqual([
      [false, first.key.scheduledAt],
      [false, first.key.scheduledAt],
    ]);
    expect(other.key.scheduledAt).not.toBe(first.key.scheduledAt);

    const payloads: unknown[] = [];
    const handlers = new HandlerRegistry([
      defineJob('pay', async (ctx) => void payloads.push({ key: ctx.executionKey, amount: ctx.payload?.amount })),
    ]);
    await withWorkers(handlers, async () =>
      (await runtime.jobs().slicesOf('trig', 0)).every((slice) => slice.status === SliceStatus.Succeeded),
    );

    expect(payloads).toHaveLength(2);
    expect(payloads).toContainEqual({ key: first.executionKey, amount: 7 });
    expect(payloads).toContainEqual({ key: other.executionKey, amount: 1 });
    const slice = await runtime.slices.get(first.key);
    expect(slice).toMatchObject({
      status: 'SUCCEEDED',
      fence: 1,
      operator: { action: 'trigger', actor: 'alice', reason: 'test', requestId: 'req-1' },
    });
    expect(await runtime.slices.getLedger(first.key)).toMatchObject({ executionKey: first.executionKey, outcome: 'SUCCEEDED', fence: 1 });
    // A retry after the run finds the same slot, final, and sends nothing new.
    expect(await operator.trigger('trig', { ...alice, requestId: 'req-1' })).toMatchObject({
      created: false,
      status: 'SUCCEEDED',
      key: first.key,
    });
    expect(await runtime.jobs().slicesOf('trig', 0)).toHaveLength(2);
  });

  it('refuses an unknown job and bad input before writing anything, naming the field and value', async () => {
    const operator = installation.runtime.operator();
    await expect(operator.trigger('no-such-job', { ...alice, requestId: 'r' })).rejects.toThrow(JobNotFoundError);
    await installation.runtime.jobs(['pay']).put({ id: 'trig-bad', schedule: YEARLY, handler: 'pay' });
    await expect(operator.trigger('trig-bad', { ...alice, requestId: 'r', payload: '{bad' })).rejects.toThrow(
      /^invalid payload "\{bad": is not JSON/,
    );
    await expect(operator.trigger('trig-bad', { ...alice, requestId: '' })).rejects.toThrow(InvalidOperatorRequestError);
    expect(await installation.runtime.jobs().slicesOf('trig-bad', 0)).toEqual([]);
  });
});

describe('jobs backfill', () => {
  it('each past occurrence once; the same backfill again runs nothing already there', async () => {
    const { runtime } = installation;
    await runtime.jobs(['count']).put({ id: 'back', schedule: '*/5 * * * * *', handler: 'count' });
    const from = wholeSecond(-60_000) - (wholeSecond(-60_000) % 5000);
    const to = from + 30_000;
    const operator = runtime.operator();
    const progress: number[] = [];
    const started = Date.now();
    const result = await operator.backfill('back', { ...alice, from, to, ratePerSecond: 20, onProgress: (p) => progress.push(p.done) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250); // 6 slots at 20/s: the rate holds
    expect(result).toMatchObject({ total: 6, created: 6, existing: 0 });
    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);

    const runs: string[] = [];
    const handlers = new HandlerRegistry([defineJob('count', async (ctx) => void runs.push(ctx.executionKey))]);
    const inRange = async () => (await runtime.jobs().slicesOf('back', from)).filter((slice) => slice.scheduledAt < to);
    await withWorkers(handlers, async () => (await inRange()).every((slice) => slice.status === SliceStatus.Succeeded));
    expect(runs.sort()).toEqual([0, 1, 2, 3, 4, 5].map((i) => executionKey('back', from + i * 5000)));
    expect((await inRange()).map((slice) => slice.operator?.action)).toEqual(Array(6).fill('backfill'));

    expect(await operator.backfill('back', { ...alice, from, to })).toMatchObject({
      total: 6,
      created: 0,
      alreadyFinal: 6,
      alreadyLive: 0,
    });
    await expect(operator.backfill('back', { ...alice, from: to, to: from })).rejects.toThrow(/^invalid to /);
    await expect(operator.backfill('nope', { ...alice, from, to })).rejects.toThrow(JobNotFoundError);
  });
});

describe('pause with a reason and an end', () => {
  it('settles what was due, records who and why, and the scanner takes the job up again at the end by itself', async () => {
    const start = wholeSecond();
    const clock = new ManualClock(start);
    // Its scans' messages are kept, and handed to a worker below in the order sent.
    const { runtime, queue } = recordingRuntime(installation, { clock });
    const put = await runtime.jobs(['count']).put({ id: 'timed', schedule: '* * * * * *', handler: 'count' });
    const sentBefore = queue.mark();
    await runtime.scanner('s1').scanShard(0);
    const before = sentBefore.take().filter((message) => message.jobId === 'timed');
    // Three occurrences fall due before the pause, their messages on their way: the pause records them SKIPPED.
    clock.advance(2500);
    const until = start + 8000;
    const { job, skipped } = await runtime.operator().pause('timed', { actor: 'alice', reason: 'incident 42', until });
    expect(skipped).toBe(3);
    expect(job.pause).toMatchObject({ actor: 'alice', reason: 'incident 42', until });
    expect(
      (await runtime.jobs().slicesOf('timed', 0)).map((slice) => [
        slice.scheduledAt - put.job.nextFireAt,
        slice.status,
        slice.skipReason,
        slice.generation,
      ]),
    ).toEqual([0, 1000, 2000].map((offset) => [offset, SliceStatus.Skipped, 'paused', put.job.generation]));

    // The next scan sends the paused generation's occurrences from its end on, none before.
    const sentAfter = queue.mark();
    await runtime.scanner('s1').scanShard(0);
    const resumes = sentAfter.take().filter((message) => message.jobId === 'timed');
    expect(resumes.length).toBeGreaterThan(0);
    expect(Math.min(...resumes.map((message) => message.scheduledAt))).toBe(until);
    expect(resumes.every((message) => message.generation === job.generation)).toBe(true);

    // Resumed by hand after the end: the record is cleared, the same generation runs on.
    clock.set(until + 500);
    const resumed = await runtime.operator().resume('timed', { actor: 'bob', reason: 'over' });
    expect(resumed).toMatchObject({ job: { enabled: true, generation: job.generation, resumed: { actor: 'bob', reason: 'over' } } });
    expect(resumed.job.pause).toBeUndefined();

    // The messages of the first 10 s after the end delivered, in the order sent: nothing before the end runs; from
    // the end on, each occurrence runs once.
    const window = (message: { scheduledAt: number }): boolean => message.scheduledAt < until + 10_000;
    const delivered = resumes.filter(window);
    const runs: number[] = [];
    const handlers = new HandlerRegistry([defineJob('count', async (ctx) => void runs.push(ctx.scheduledAt.getTime()))]);
    clock.set(until + 11_000);
    await processInOrder(runtime.worker('w1', handlers), [...before.filter(window), ...delivered]);
    const slices = await runtime.jobs().slicesOf('timed', 0);
    expect(
      slices
        .filter((slice) => slice.scheduledAt < until)
        .every((slice) => slice.status === SliceStatus.Skipped && slice.skipReason === 'paused'),
    ).toBe(true);
    const sinceEnd = slices.filter((slice) => slice.scheduledAt >= until);
    expect(sinceEnd.map((slice) => [slice.scheduledAt, slice.status, slice.generation])).toEqual(
      delivered.map((message) => [message.scheduledAt, SliceStatus.Succeeded, job.generation]),
    );
    expect(runs.sort((a, b) => a - b)).toEqual(delivered.map((message) => message.scheduledAt));
  });

  it('needs a reason and a future end', async () => {
    await installation.runtime.jobs(['count']).put({ id: 'timed-bad', schedule: YEARLY, handler: 'count' });
    await expect(installation.runtime.operator().pause('timed-bad', { actor: 'a' })).rejects.toThrow('invalid reason (missing)');
    await expect(installation.runtime.operator().pause('timed-bad', { actor: 'a', reason: 'x', until: Date.now() - 1 })).rejects.toThrow(
      /^invalid until/,
    );
    expect((await installation.runtime.jobs().require('timed-bad')).enabled).toBe(true);
  });
});

describe('groups and origin', () => {
  it('pauses and resumes a whole group, and nothing outside it', async () => {
    const repository = installation.runtime.jobs(['count']);
    for (const id of ['g-a', 'g-b']) await repository.put({ id, schedule: YEARLY, handler: 'count', group: 'payments' });
    await repository.put({ id: 'g-other', schedule: YEARLY, handler: 'count', group: 'reports' });
    const paused = await installation.runtime.operator().pauseGroup('payments', { actor: 'alice', reason: 'incident' });
    expect(paused.map((result) => result.job.id)).toEqual(['g-a', 'g-b']);
    expect((await repository.require('g-other')).enabled).toBe(true);
    expect((await repository.require('g-a')).pause).toMatchObject({ actor: 'alice', reason: 'incident' });
    const resumed = await installation.runtime.operator().resumeGroup('payments', { actor: 'alice' });
    expect(resumed.map((result) => result.job.enabled)).toEqual([true, true]);
  });

  it('the CDK custom resource never replaces nor deletes a job created at run time', async () => {
    const { runtime } = installation;
    await runtime.jobs(['count']).put({ id: 'tenant-7', schedule: YEARLY, handler: 'count' });
    const resource = (RequestType: 'Create' | 'Delete') =>
      ({
        RequestType,
        PhysicalResourceId: 'tenant-7',
        ResourceProperties: { ServiceToken: 'x', Job: JSON.stringify({ id: 'tenant-7', schedule: '* * * * *', handler: 'count' }) },
      }) as unknown as CloudFormationCustomResourceEvent;
    await expect(onJobEvent(resource('Create'), (known) => runtime.jobs(known))).rejects.toThrow(JobOwnershipError);
    await onJobEvent(resource('Delete'), (known) => runtime.jobs(known));
    expect(await runtime.jobs().require('tenant-7')).toMatchObject({ schedule: YEARLY, origin: 'runtime' });
  });
});
