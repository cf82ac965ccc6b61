/**
 * Behind a Lambda event source the work queue's visibility is the function
 * timeout (120 s), so a worker sets each claimed message's visibility to its
 * job's (lease minus a heartbeat). Against the emulator: the claims of one
 * batch, replying at least 20 ms apart as from a busy table (the emulator
 * adds its own stalls), share one ChangeMessageVisibilityBatch (two if the
 * replies spread past the 750 ms longest wait), and a message whose worker stops after its
 * claim comes back within the job's visibility, not the queue's.
 */
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSleep } from '../../lib/core/clock.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

const LAMBDA_QUEUE_VISIBILITY_MS = 120_000;
const BATCH = 10;
/** How far apart the claims' replies come back. */
const CLAIM_REPLY_SPACING_MS = 20;

let installation: TestInstallation;
const visibilityRequests: { command: string; entries: number }[] = [];
let claimsToSpread = 0;

beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_WORK_QUEUE_VISIBILITY_MS: String(LAMBDA_QUEUE_VISIBILITY_MS) } });
  installation.runtime.clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      if (command.startsWith('ChangeMessageVisibility')) {
        const entries = (args.input as { Entries?: unknown[] }).Entries?.length ?? 1;
        visibilityRequests.push({ command, entries });
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordVisibilityChanges' },
  );
  // The claims' replies held back to 20 ms apart, the way a busy table answers a batch's claims.
  installation.runtime.clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'UpdateItemCommand' || claimsToSpread === 0) return next(args);
      const order = BATCH - claimsToSpread--;
      const sentAt = Date.now();
      const result = await next(args);
      await realSleep(sentAt + order * CLAIM_REPLY_SPACING_MS - Date.now());
      return result;
    },
    { step: 'initialize', name: 'spreadClaimReplies' },
  );
});
afterAll(() => installation?.destroy());

describe('claims behind a Lambda event source', () => {
  it(
    "a batch's claims set their messages' visibility in one request, and an abandoned claim's message is back within the job's",
    { timeout: 60_000 },
    async () => {
      const due = wholeSecond(-1000);
      const keys = [];
      for (let index = 0; index < BATCH; index++)
        keys.push((await enqueuedSlice(installation, { id: `lambda-batch-${index}`, handler: 'noop' }, due, ['noop'])).key);
      const { workQueue } = installation.runtime;
      await workQueue.send(keys.map((key) => ({ ...key, delaySeconds: 0 })));
      const url = installation.resources.queueUrls.work;
      const received = [];
      while (received.length < BATCH)
        received.push(...(await installation.receive(url, BATCH - received.length, LAMBDA_QUEUE_VISIBILITY_MS / 1000)));

      const worker = installation.runtime.worker('lambda-worker', new HandlerRegistry([defineJob('noop', async () => {})]));
      visibilityRequests.length = 0;
      claimsToSpread = BATCH;
      // The way the worker handler runs a batch: every record at once.
      const dispositions = await Promise.all(
        received.map((message) =>
          worker.process({ body: message.Body!, receiptHandle: message.ReceiptHandle!, messageId: message.MessageId }),
        ),
      );
      expect(dispositions).toEqual(Array(BATCH).fill('delete'));
      expect(visibilityRequests.every((request) => request.command === 'ChangeMessageVisibilityBatchCommand')).toBe(true);
      expect(visibilityRequests.reduce((sum, request) => sum + request.entries, 0)).toBe(BATCH);
      // A fixed 50 ms window sent these as four requests.
      expect(visibilityRequests.length).toBeLessThanOrEqual(2);

      // Deleted but for one, as if its worker had stopped after the claim: it is back after the job's 3 s.
      const [abandoned, ...done] = received;
      for (const message of done)
        await installation.runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
      await realSleep(4000);
      const back = await installation.receive(url, BATCH, 30);
      expect(back.map((message) => message.MessageId)).toEqual([abandoned!.MessageId]);
    },
  );
});
