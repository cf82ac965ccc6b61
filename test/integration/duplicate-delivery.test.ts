/**
 * The same work message delivered three times, to three workers polling the
 * real queue, has one effect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { businessRows, createBusinessTable } from '../support/business-table.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
let payouts: string;
beforeAll(async () => {
  installation = await createTestInstallation();
  payouts = await createBusinessTable(installation);
});
afterAll(() => installation?.destroy());

const silent = { info: () => {}, error: () => {} };

describe('duplicate delivery', () => {
  it('three copies of one message, three workers: one handler run, one commit, one business row', async () => {
    const runs: string[] = [];
    const handlers = new HandlerRegistry([
      defineJob('pay', async (ctx) => {
        runs.push(ctx.worker);
        await ctx.commit([{ put: { tableName: payouts, item: { id: ctx.executionKey, fence: ctx.fence } } }]);
      }),
    ]);
    const { runtime } = installation;
    const { key } = await enqueuedSlice(
      installation,
      { id: 'dup', handler: 'pay', policies: { leaseMs: 2000, heartbeatMs: 500 } },
      wholeSecond(2000),
      ['pay'],
    );
    const copies = [0, 1, 2].map(() => ({ ...key, delaySeconds: 1 }));
    await runtime.workQueue.send(copies);

    const pollers = ['w1', 'w2', 'w3'].map(
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
      await eventually(() => (installation.events.ofType('committed').length > 0 ? true : undefined));
      // The losers' copies come back when the winner's lease would have ended, and are dropped then.
      await eventually(
        async () => ((await installation.depth(installation.resources.queueUrls.work)) === 0 ? true : undefined),
        30_000,
        250,
      );
    } finally {
      pollers.forEach((poller) => poller.stop());
      await Promise.all(running);
    }
    expect(runs).toHaveLength(1);
    expect(installation.events.ofType('committed')).toHaveLength(1);
    expect(await businessRows(installation, payouts)).toHaveLength(1);
    expect(await runtime.slices.getLedger(key)).toMatchObject({ outcome: 'SUCCEEDED', fence: 1 });
    expect((await runtime.slices.get(key))?.status).toBe('SUCCEEDED');
  });

  it('a message replayed after the commit is dropped without running the handler', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry([defineJob('count', async () => void runs++)]);
    const { runtime } = installation;
    const { key } = await enqueuedSlice(installation, { id: 'replay', handler: 'count' }, wholeSecond(-1000), ['count']);
    const worker = runtime.worker('w1', handlers);
    await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    const [first] = await installation.receiveSome(installation.resources.queueUrls.work, 1);
    expect(await worker.process({ body: first!.Body!, receiptHandle: first!.ReceiptHandle! })).toBe('delete');
    await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    const [replay] = await installation.receiveSome(installation.resources.queueUrls.work, 1);
    expect(await worker.process({ body: replay!.Body!, receiptHandle: replay!.ReceiptHandle! })).toBe('delete');
    expect(runs).toBe(1);
    const claims = installation.events.ofType('claimed').filter((event) => event.jobId === 'replay');
    expect(claims).toHaveLength(1);
    // How long the claim took, by the worker's clock (docs/events.md).
    expect(claims[0]!.claimMs).toBeGreaterThanOrEqual(0);
  });
});
