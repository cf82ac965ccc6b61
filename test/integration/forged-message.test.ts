/**
 * Whoever may send to the work queue names a slot, never what runs: forged
 * bodies sent to the real queue (in the format scanners wrote before this
 * rule, with a whole definition in `run`) and polled by real workers over the
 * emulator-backed stores. One at the job's real occurrence with another
 * handler and payload runs the stored handler with the stored payload, once,
 * and the scanner's own message for that occurrence is then dropped as a
 * duplicate; one at a second that is no occurrence is dead-lettered with the
 * reason, and leaves no slice.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definitionOf } from '../../lib/core/job-record.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

const silent = { info: () => {}, error: () => {} };

describe('a forged work message on the real queue', () => {
  it('runs only the stored definition at a real occurrence, and is dead-lettered with the reason at any other second', async () => {
    const { runtime } = installation;
    const runs: string[] = [];
    const handlers = new HandlerRegistry([
      defineJob('pay', async (ctx) => void runs.push(`pay ${JSON.stringify(ctx.payload)}`)),
      defineJob('drain', async (ctx) => void runs.push(`drain ${JSON.stringify(ctx.payload)}`)),
    ]);
    const { job } = await runtime
      .jobs(['pay', 'drain'])
      .put({ id: 'forged-pay', schedule: '*/10 * * * * *', handler: 'pay', payload: { amount: 100 } });
    const occurrence = Math.ceil((Math.max(Date.now(), job.nextFireAt) + 1000) / 10_000) * 10_000;
    const notAnOccurrence = occurrence + 3000;
    const queueUrl = installation.resources.queueUrls.work;
    const forged = (scheduledAt: number): string =>
      JSON.stringify({ v: 1, jobId: job.id, scheduledAt, run: { ...definitionOf(job), handler: 'drain', payload: { amount: 1_000_000 } } });
    for (const body of [forged(occurrence), forged(notAnOccurrence)]) {
      await runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, DelaySeconds: 0 }));
    }

    const poller = new SqsPoller({
      sqs: runtime.clients.sqs,
      queueUrl,
      handler: createWorkerHandler(runtime, 'w1', handlers, silent),
      waitTimeSeconds: 1,
    });
    const running = poller.run();
    try {
      await eventually(() => (installation.events.ofType('committed').some((event) => event.jobId === job.id) ? true : undefined), 30_000);
      // The scanner's own message for the occurrence, after the forged one: the slot is final, so it is dropped.
      await runtime.workQueue.send([{ jobId: job.id, scheduledAt: occurrence, delaySeconds: 0, generation: job.generation }]);
      await eventually(async () => ((await installation.depth(queueUrl)) === 0 ? true : undefined), 30_000, 250);
    } finally {
      poller.stop();
      await running;
    }

    expect(runs).toEqual(['pay {"amount":100}']);
    expect(await runtime.slices.get({ jobId: job.id, scheduledAt: occurrence })).toMatchObject({
      status: SliceStatus.Succeeded,
      handler: 'pay',
      payload: { amount: 100 },
      fence: 1,
      attempts: 1,
    });
    expect(await runtime.slices.get({ jobId: job.id, scheduledAt: notAnOccurrence })).toBeUndefined();
    const rejected: Record<string, unknown>[] = [];
    await eventually(async () => {
      for (const message of await installation.receive(installation.resources.queueUrls.deadLetter, 10, 60))
        rejected.push(JSON.parse(message.Body ?? 'null') as Record<string, unknown>);
      return rejected.length > 0 ? true : undefined;
    }, 15_000);
    expect(rejected).toEqual([
      expect.objectContaining({
        kind: 'unrunnable-message',
        body: forged(notAnOccurrence),
        reason: expect.stringMatching(
          /is not an occurrence of generation 1 \(schedule "\*\/10 \* \* \* \* \*" in UTC\), and no slot is on record there$/,
        ),
      }),
    ]);
  });
});
