/**
 * A lookahead past SQS's longest delay (900 s), against the emulator: the
 * scan sends the occurrence that far ahead, delayed by 900 s, carrying its
 * definition (no slice is written: the claim creates it); the message then
 * surfaces before its second, and the worker hides it again until then
 * without claiming; at its second the same message creates the slice and
 * runs it once. What lets a million-slice midnight be sent before midnight
 * (docs/bench.md, "Pre-enqueueing a burst").
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { recordingRuntime } from '../support/recording-queue.ts';

const LOOKAHEAD_MS = 30 * 60_000;
const AHEAD_MS = 20 * 60_000;

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_LOOKAHEAD_MS: String(LOOKAHEAD_MS) } });
});
afterAll(() => installation?.destroy());

/** `at(...)` of a UTC instant. */
function atUtc(epochMs: number): string {
  return `at(${new Date(epochMs).toISOString().slice(0, 19)})`;
}

async function queueCounts(): Promise<{ visible: number; hidden: number; delayed: number }> {
  const { Attributes: a = {} } = await installation.runtime.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: installation.resources.queueUrls.work,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    hidden: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

describe('a lookahead longer than one SQS delay', () => {
  it('sends the occurrence 20 minutes ahead, hides its early message again without a claim, and creates and runs its slice at its second', async () => {
    const start = Math.ceil(Date.now() / 1000) * 1000;
    const due = start + AHEAD_MS;
    const clock = new ManualClock(start);
    const { runtime, queue } = recordingRuntime(installation, { clock, forward: true });
    const { job } = await runtime.jobs().put({ id: 'far-ahead', schedule: atUtc(due), handler: 'count' });

    const report = await runtime.scanner('s1').scanShard(0);
    expect(report.sent).toBe(1);
    const key = { jobId: 'far-ahead', scheduledAt: due };
    const [sent] = queue.sent;
    expect(sent).toEqual({ ...key, delaySeconds: 900, generation: job.generation });
    // Sent, not written: the claim at its second creates the slice.
    expect(await runtime.slices.get(key)).toBeUndefined();
    // Sent with the longest delay SQS has: not receivable now.
    expect(await queueCounts()).toMatchObject({ visible: 0, delayed: 1 });
    expect(await installation.receive(installation.resources.queueUrls.work, 10, 30)).toEqual([]);

    // What SQS hands a worker 900 s later, still 5 minutes before the second: the same body.
    await runtime.workQueue.send([{ ...sent!, delaySeconds: 0 }]);
    // Received with a 1 s visibility: only the worker's hide keeps it from coming back at once.
    const [early] = await eventually(async () => {
      const messages = await installation.receive(installation.resources.queueUrls.work, 1, 1);
      return messages.length > 0 ? messages : undefined;
    });
    clock.set(due - 5 * 60_000);
    let runs = 0;
    const worker = runtime.worker('w1', new HandlerRegistry([defineJob('count', async () => void runs++)]));
    const message = { body: early!.Body!, receiptHandle: early!.ReceiptHandle!, messageId: early!.MessageId };
    expect(await worker.process(message)).toBe('keep');
    // Hidden again until its second, no claim: still no slice.
    expect(await runtime.slices.get(key)).toBeUndefined();
    expect(installation.events.ofType('claimed').filter((event) => event.jobId === 'far-ahead')).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await installation.receive(installation.resources.queueUrls.work, 10, 30)).toEqual([]);
    expect((await queueCounts()).hidden).toBeGreaterThanOrEqual(1);

    // At its second the message surfaces again: one claim, which creates the slice, one run, committed.
    clock.set(due);
    expect(await worker.process(message)).toBe('delete');
    expect(runs).toBe(1);
    expect(await runtime.slices.get(key)).toMatchObject({
      status: SliceStatus.Succeeded,
      fence: 1,
      attempts: 1,
      claimedFrom: SliceStatus.Enqueued,
      generation: job.generation,
    });
  });
});
