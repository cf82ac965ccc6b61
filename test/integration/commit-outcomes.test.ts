/**
 * What a commit's outcome does to the attempt: one commit per attempt, a
 * swallowed failure fails the attempt, a commit that landed is committed
 * (never DEAD) however late or lost its reply, a refusal for now is sent
 * again on the same fence, an invalid commit fails once and names its cause.
 * A real Worker over the emulator's tables and queue; the wrappers only delay
 * or lose a reply of the real store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSleep, systemClock } from '../../lib/core/clock.ts';
import { StoreBusyError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { BusinessWrite, SliceStore } from '../../lib/core/ports.ts';
import type { SliceKey } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry, type JobFunction } from '../../lib/engine/define-job.ts';
import { Worker, type Disposition } from '../../lib/engine/worker.ts';
import type { JobPolicies } from '../../lib/core/job-spec.ts';
import { businessRow, createBusinessTable } from '../support/business-table.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
let payouts: string;
beforeAll(async () => {
  installation = await createTestInstallation();
  payouts = await createBusinessTable(installation);
});
afterAll(() => installation?.destroy());

const FAST: Partial<JobPolicies> = { leaseMs: 2000, heartbeatMs: 500, backoffBaseMs: 200, backoffMaxMs: 400 };

/** The real store, with its commit replaced by `commit(inner)`. */
function withCommit(commit: (inner: SliceStore, args: Parameters<SliceStore['commit']>) => Promise<void>): SliceStore {
  const inner = installation.runtime.slices;
  return Object.assign(Object.create(inner) as SliceStore, {
    commit: (...args: Parameters<SliceStore['commit']>) => commit(inner, args),
  });
}

/** Runs one slice of a fresh job through a real Worker, from a real queue message. */
async function runSlice(
  id: string,
  run: JobFunction,
  options: { policies?: Partial<JobPolicies>; slices?: SliceStore } = {},
): Promise<{ key: SliceKey; disposition: Disposition; types: string[]; errors: string[] }> {
  const { runtime } = installation;
  const { key } = await enqueuedSlice(installation, { id, handler: id, policies: { ...FAST, ...options.policies } }, wholeSecond(), [id]);
  const worker = new Worker({
    workerId: 'w1',
    slices: options.slices ?? runtime.slices,
    jobs: runtime.jobReader,
    queue: runtime.workQueue,
    deadLetters: runtime.deadLetters,
    events: installation.events,
    clock: systemClock,
    handlers: new HandlerRegistry([defineJob(id, run)]),
  });
  await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
  // Earlier tests' kept messages come back on this shared queue: take this slice's own.
  const message = await eventually(async () => {
    const received = await installation.receive(installation.resources.queueUrls.work, 10);
    return received.find((candidate) => JSON.parse(candidate.Body ?? '{}').jobId === id);
  });
  const disposition = await worker.process({ body: message.Body!, receiptHandle: message.ReceiptHandle!, messageId: message.MessageId });
  const mine = installation.events.events.filter((event) => event.executionKey === executionKey(key.jobId, key.scheduledAt));
  return { key, disposition, types: mine.map((event) => event.type), errors: mine.flatMap((event) => (event.error ? [event.error] : [])) };
}

const payout = (id: string): BusinessWrite => ({ put: { tableName: payouts, item: { id, amount: 1 } } });

describe('commit outcomes', () => {
  it('a second ctx.commit, even while the first is in flight, throws and writes nothing more; the first stands', async () => {
    let second: unknown;
    const { key, types } = await runSlice('commit-twice', async (ctx) => {
      const first = ctx.commit([payout('twice-1')]);
      second = await ctx.commit([payout('twice-2')]).catch((error: unknown) => error);
      await first;
    });
    expect(second).toBeInstanceOf(Error);
    expect((second as Error).name).toBe('AlreadyCommittedError');
    expect(types).toEqual(['claimed', 'started', 'committed']);
    expect(await businessRow(installation, payouts, 'twice-1')).toBeDefined();
    expect(await businessRow(installation, payouts, 'twice-2')).toBeUndefined();
    expect((await installation.runtime.slices.get(key))?.status).toBe('SUCCEEDED');
  });

  it('a handler that catches a failed commit fails its attempt; it never becomes an empty SUCCEEDED', async () => {
    const { key, disposition, types, errors } = await runSlice('swallowed-commit', async (ctx) => {
      const guarded: BusinessWrite = {
        put: { tableName: payouts, item: { id: 'swallowed', amount: 1 }, conditionExpression: 'attribute_exists(id)' },
      };
      await ctx.commit([guarded]).catch(() => {});
    });
    expect(disposition).toBe('keep');
    expect(types).toEqual(['claimed', 'started', 'failed']);
    expect(errors[0]).toMatch(/BusinessConditionFailedError/);
    expect(await installation.runtime.slices.get(key)).toMatchObject({ status: 'FAILED' });
    expect(await installation.runtime.slices.getLedger(key)).toBeUndefined();
  });

  it('on the last attempt, a commit whose reply comes after the timeout is committed, never DEAD or dead-lettered', async () => {
    const slices = withCommit(async (inner, args) => {
      await inner.commit(...args);
      await realSleep(1500);
    });
    const { key, disposition, types } = await runSlice(
      'late-reply',
      async (ctx) => {
        await ctx.commit([payout('late-reply')]);
      },
      { policies: { maxAttempts: 1, timeoutMs: 1000 }, slices },
    );
    expect(disposition).toBe('delete');
    expect(types).toEqual(['claimed', 'started', 'committed']);
    expect(await installation.runtime.slices.get(key)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await installation.runtime.slices.getLedger(key)).toMatchObject({ outcome: 'SUCCEEDED' });
    const dead = await installation.receive(installation.resources.queueUrls.deadLetter, 10, 1);
    expect(dead.map((message) => message.Body ?? '').filter((body) => body.includes(executionKey(key.jobId, key.scheduledAt)))).toEqual([]);
  });

  it('a commit that landed but whose reply never comes ends committed, not fenced out', async () => {
    const slices = withCommit(async (inner, args) => {
      await inner.commit(...args);
      await new Promise(() => {}); // the reply is lost for good
    });
    const { key, disposition, types } = await runSlice('lost-reply', async (ctx) => ctx.commit([payout('lost-reply')]), { slices });
    expect(disposition).toBe('delete');
    expect(types).toEqual(['claimed', 'started', 'committed']);
    expect(await installation.runtime.slices.getLedger(key)).toMatchObject({ outcome: 'SUCCEEDED', fence: 1 });
  });

  it('a commit DynamoDB refuses for now is sent again on the same fence, the handler run once', async () => {
    let refusals = 0;
    let runs = 0;
    const slices = withCommit(async (inner, args) => {
      if (refusals++ < 2) throw new StoreBusyError('commit', 'ThrottlingError');
      await inner.commit(...args);
    });
    const { key, types } = await runSlice(
      'throttled-commit',
      async (ctx) => {
        runs++;
        await ctx.commit([payout('throttled')]);
      },
      { slices },
    );
    expect(runs).toBe(1);
    expect(types).toEqual(['claimed', 'started', 'committed']);
    expect(await installation.runtime.slices.getLedger(key)).toMatchObject({ fence: 1, outcome: 'SUCCEEDED' });
  });

  it('an item over 400 KB fails the attempt once, naming the cause; it is not retried as ambiguous', async () => {
    let sends = 0;
    const slices = withCommit(async (inner, args) => {
      sends++;
      await inner.commit(...args);
    });
    const big: BusinessWrite = { put: { tableName: payouts, item: { id: 'too-big', blob: 'x'.repeat(410 * 1024) } } };
    const { types, errors } = await runSlice('oversize-commit', async (ctx) => ctx.commit([big]), { slices, policies: { maxAttempts: 1 } });
    expect(sends).toBe(1);
    expect(types).toEqual(['claimed', 'started', 'dead']);
    expect(errors[0]).toMatch(/CommitRejectedError.*ValidationException/);
  });

  it("a commit to a missing table of your own names that table, not cronfence's", async () => {
    const { errors } = await runSlice('missing-user-table', async (ctx) =>
      ctx.commit([{ put: { tableName: 'no-such-business-table', item: { id: 'x' } } }]),
    );
    expect(errors[0]).toContain('"no-such-business-table"');
    expect(errors[0]).toContain('one of your own tables');
    expect(errors[0]).not.toContain(installation.runtime.config.slicesTable);
  });
});
