/**
 * Clocks within the promised ±2 s never displace a holder that keeps
 * renewing, and a claim request resent after its reply was lost is one
 * attempt. Real Workers and the real claim over the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { DynamoSliceStore } from '../../lib/aws/dynamo/slice-store.ts';
import { OffsetClock, realSleep } from '../../lib/core/clock.ts';
import { definitionOf } from '../../lib/core/job-record.ts';
import { MAX_CLOCK_SKEW_MS } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { Worker } from '../../lib/engine/worker.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

describe('clock skew', () => {
  it('a holder 2 s slow keeps its slice against a late duplicate handled 1.5 s later by a worker 2 s fast', async () => {
    const { runtime } = installation;
    const runs: string[] = [];
    const handlers = new HandlerRegistry([
      defineJob('slow-skew', async (ctx) => {
        runs.push(ctx.worker);
        await realSleep(3500, ctx.signal);
      }),
    ]);
    const { key } = await enqueuedSlice(installation, { id: 'skewed', handler: 'slow-skew' }, wholeSecond(), ['slow-skew']);
    const worker = (id: string, offsetMs: number) =>
      new Worker({
        workerId: id,
        slices: runtime.slices,
        jobs: runtime.jobReader,
        queue: runtime.workQueue,
        deadLetters: runtime.deadLetters,
        events: installation.events,
        clock: new OffsetClock(offsetMs),
        handlers,
        onError: (error, context) => console.error(`${id} ${context}:`, error),
      });
    await runtime.workQueue.send([
      { ...key, delaySeconds: 0 },
      { ...key, delaySeconds: 0 },
    ]);
    const copies = await eventually(async () => {
      const received = await installation.receive(installation.resources.queueUrls.work, 10);
      return received.length === 2 ? received : undefined;
    });
    const [original, duplicate] = copies;
    const holder = worker('slow-holder', -MAX_CLOCK_SKEW_MS).process({
      body: original!.Body!,
      receiptHandle: original!.ReceiptHandle!,
      messageId: original!.MessageId,
    });
    await realSleep(1500);
    const late = await worker('fast-standby', MAX_CLOCK_SKEW_MS).process({
      body: duplicate!.Body!,
      receiptHandle: duplicate!.ReceiptHandle!,
      messageId: duplicate!.MessageId,
    });
    const held = await holder;
    // The events first: on a failure they say what happened (a LocalStack run once saw 'keep' here).
    const mine = installation.events.events
      .filter((event) => event.jobId === 'skewed')
      .map((event) => `${event.type}@${event.worker}${event.error ? ` ${event.error}` : ''}`);
    expect(mine).toEqual(['claimed@slow-holder', 'started@slow-holder', 'committed@slow-holder']);
    expect(held).toBe('delete');
    expect(late).toBe('delete'); // a duplicate of a held slice is dropped
    expect(runs).toEqual(['slow-holder']);
    expect(await runtime.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'slow-holder' });
  });
});

describe('a resent claim', () => {
  /** A slice store whose every DynamoDB request goes out twice: what an SDK retry after a lost reply does (the same signed request again). */
  async function withResendingStore(use: (store: DynamoSliceStore, sent: string[]) => Promise<void>): Promise<void> {
    const clients = createAwsClients();
    const sent: string[] = [];
    clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? '?');
        await next(args);
        return next(args);
      },
      { step: 'finalizeRequest', name: 'sendTwice' },
    );
    try {
      await use(new DynamoSliceStore(clients.dynamo, installation.runtime.config), sent);
    } finally {
      destroyAwsClients(clients);
    }
  }

  it('is one attempt: the second send of the same request finds its own win', async () => {
    await withResendingStore(async (resending) => {
      const { key } = await enqueuedSlice(installation, { id: 'resent-claim', policies: { maxAttempts: 1 } }, wholeSecond(60_000));
      const claim = await resending.claim(key, 'w1', Date.now(), 'message-1');
      expect(claim.won).toBe(true);
      if (claim.won) expect(claim.slice).toMatchObject({ fence: 1, attempts: 1, owner: 'w1' });
      expect(await installation.runtime.slices.get(key)).toMatchObject({ fence: 1, attempts: 1 });
    });
  });

  it("that creates its slice (the put of a scanner message's claim) is one attempt too, with nothing sent a third time", async () => {
    await withResendingStore(async (resending, sent) => {
      const { job: stored } = await installation.runtime
        .jobs()
        .put({ id: 'resent-create', schedule: '* * * * * *', handler: 'test-handler', policies: { maxAttempts: 1 } });
      const key = { jobId: stored.id, scheduledAt: wholeSecond(60_000) };
      sent.length = 0;
      const claim = await resending.claim(key, 'w1', Date.now(), 'message-1', 1, definitionOf(stored));
      expect(sent).toEqual(['PutItemCommand']);
      expect(claim.won).toBe(true);
      if (claim.won)
        expect(claim.slice).toMatchObject({ fence: 1, attempts: 1, owner: 'w1', claimedFrom: 'ENQUEUED', generation: stored.generation });
      expect(await installation.runtime.slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 1, attempts: 1, owner: 'w1' });
    });
  });
});
