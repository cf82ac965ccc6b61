/**
 * Behind Lambda's event source a batch's records are deleted when the whole batch returns, but a record stops being
 * kept hidden once its slice is committed (its visibility is the lease's, set at its claim and renewed by its
 * heartbeats): while a slow batch-mate runs, it would surface and be received again. The worker handler deletes a
 * record settled `delete` at once, its deletes coalesced, and leaves to the event source the deletes still waiting
 * when the batch returns. Against the emulator, with the event shaped as Lambda delivers it (no poller).
 */
import { DeleteMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSleep } from '../../lib/core/clock.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

/** The work queue's visibility as the construct deploys it (the worker's timeout). */
const LAMBDA_QUEUE_VISIBILITY_MS = 120_000;
/** Past the fast record's visibility after its commit (the lease minus a heartbeat, 3 s), with room. */
const SLOW_HANDLER_MS = 7000;

let installation: TestInstallation;
const deleteRequests: number[] = [];

beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_WORK_QUEUE_VISIBILITY_MS: String(LAMBDA_QUEUE_VISIBILITY_MS) } });
  installation.runtime.clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'DeleteMessageBatchCommand')
        deleteRequests.push((args.input as { Entries?: unknown[] }).Entries?.length ?? 0);
      return next(args);
    },
    { step: 'initialize', name: 'recordDeletes' },
  );
});
afterAll(() => installation?.destroy());

/** A received message as Lambda's event source hands it to the function. */
function lambdaRecord(message: Message, queueArn: string): SQSRecord {
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body!,
    attributes: {
      ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'AROAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

describe('a record done early in a slow Lambda batch', () => {
  it('is deleted at once, not received again while its batch-mate runs, and committed once', { timeout: 60_000 }, async () => {
    const due = wholeSecond(-1000);
    const fast = await enqueuedSlice(installation, { id: 'early-fast', handler: 'fast' }, due, ['fast', 'slow']);
    const slow = await enqueuedSlice(installation, { id: 'early-slow', handler: 'slow' }, due, ['fast', 'slow']);
    await installation.runtime.workQueue.send([fast.key, slow.key].map((key) => ({ ...key, delaySeconds: 0 })));
    const url = installation.resources.queueUrls.work;
    const received: Message[] = [];
    while (received.length < 2) received.push(...(await installation.receive(url, 2 - received.length, LAMBDA_QUEUE_VISIBILITY_MS / 1000)));

    const handlers = new HandlerRegistry([defineJob('fast', async () => {}), defineJob('slow', async () => realSleep(SLOW_HANDLER_MS))]);
    const silent = { error: () => {}, info: () => {} };
    const handler = createWorkerHandler(installation.runtime, 'lambda-worker', handlers, silent);
    deleteRequests.length = 0;
    let done = false;
    const invocation = handler({
      Records: received.map((message) => lambdaRecord(message, 'arn:aws:sqs:us-east-1:000000000000:work')),
    }).finally(() => (done = true));

    // Another invocation of the same function, polling while the batch runs.
    const receivedAgain: string[] = [];
    while (!done) {
      for (const message of await installation.receive(url, 10, 1)) receivedAgain.push(message.Body ?? '');
    }
    const response = await invocation;

    expect(response.batchItemFailures).toEqual([]);
    // Before the fix the fast record surfaced about 3 s after its commit and was received again (and again).
    expect(receivedAgain).toEqual([]);
    // One request for the early delete of the fast record; the slow one, settled as the batch returned, is the event source's.
    expect(deleteRequests).toEqual([1]);
    const outcomes = installation.events.events.filter((event) => event.type === 'committed').map((event) => event.jobId);
    expect(outcomes.sort()).toEqual(['early-fast', 'early-slow']);
    expect(installation.events.events.filter((event) => event.type === 'claimed')).toHaveLength(2);

    // The event source then deletes the records not reported as failures: both, the fast one again, which is no error.
    const esmDelete = await installation.runtime.clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: received.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! })),
      }),
    );
    expect(esmDelete.Failed ?? []).toEqual([]);
    await realSleep(4000);
    expect(await installation.receive(url, 10, 1)).toEqual([]);
  });
});
