/**
 * Visibility changes asked for together go out as one
 * ChangeMessageVisibilityBatch against the real SQS API (the emulator), each
 * entry applied; a stale receipt handle is no error; a request SQS refuses
 * whole fails every change in it.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAIT_MS } from '../../lib/aws/sqs/coalesced-entries.ts';
import { VisibilityBatches } from '../../lib/aws/sqs/visibility-batches.ts';
import { realSleep, systemClock } from '../../lib/core/clock.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
let sqs: SQSClient;
let queueUrl: string;
const sent: string[] = [];

beforeAll(async () => {
  installation = await createTestInstallation();
  sqs = installation.runtime.clients.sqs;
  queueUrl = installation.resources.queueUrls.work;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countVisibilityRequests' },
  );
});
afterAll(() => installation?.destroy());

async function receiveAll(count: number): Promise<{ body: string; handle: string }[]> {
  const got: { body: string; handle: string }[] = [];
  for (let tries = 0; got.length < count && tries < 20; tries++) {
    const result = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    for (const message of result.Messages ?? []) got.push({ body: message.Body ?? '', handle: message.ReceiptHandle ?? '' });
  }
  return got;
}

describe('VisibilityBatches', () => {
  it('sends the changes of one moment as one batch request and applies each', { timeout: 30_000 }, async () => {
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: ['a', 'b', 'c'].map((body) => ({ Id: body, MessageBody: body })) }),
    );
    const messages = await receiveAll(3);
    expect(messages).toHaveLength(3);
    const batches = new VisibilityBatches(sqs, async () => queueUrl, systemClock);
    sent.length = 0;
    const [a, b, c] = messages as [(typeof messages)[0], (typeof messages)[0], (typeof messages)[0]];
    // a back at once, b and c hidden for a minute: only a may be received again.
    await Promise.all([batches.change(a.handle, 0), batches.change(b.handle, 60), batches.change(c.handle, 60)]);
    expect(sent.filter((name) => name.startsWith('ChangeMessageVisibility'))).toEqual(['ChangeMessageVisibilityBatchCommand']);
    const again = await receiveAll(1);
    expect(again.map((message) => message.body)).toEqual([a.body]);
    await realSleep(1200);
    const more = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(more.Messages ?? []).toEqual([]);
    for (const message of [...again, b, c]) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.handle }));
  });

  it(
    'changes trickling in less than a quarter second apart share one request, and none waits past the longest wait',
    { timeout: 30_000 },
    async () => {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: 10 }, (_, index) => ({ Id: `t${index}`, MessageBody: `t${index}` })),
        }),
      );
      const messages = await receiveAll(10);
      expect(messages).toHaveLength(10);
      const batches = new VisibilityBatches(sqs, async () => queueUrl, systemClock);
      sent.length = 0;
      // Five changes 120 ms apart (480 ms in all, past a fixed quarter-second window): one request.
      const changes: Promise<void>[] = [];
      for (const [index, message] of messages.slice(0, 5).entries()) {
        if (index > 0) await realSleep(120);
        changes.push(batches.change(message.handle, 30));
      }
      await Promise.all(changes);
      expect(sent.filter((name) => name.startsWith('ChangeMessageVisibility'))).toEqual(['ChangeMessageVisibilityBatchCommand']);
      // Five more 200 ms apart: the first four go out at the longest wait, the fifth a quarter second after it joined.
      sent.length = 0;
      const firstAskedAt = Date.now();
      let firstSettledAfter = 0;
      const trickle: Promise<void>[] = [
        batches.change(messages[5]!.handle, 30).then(() => void (firstSettledAfter = Date.now() - firstAskedAt)),
      ];
      for (const message of messages.slice(6)) {
        await realSleep(200);
        trickle.push(batches.change(message.handle, 30));
      }
      await Promise.all(trickle);
      expect(sent.filter((name) => name.startsWith('ChangeMessageVisibility'))).toEqual([
        'ChangeMessageVisibilityBatchCommand',
        'ChangeMessageVisibilityBatchCommand',
      ]);
      expect(firstSettledAfter).toBeGreaterThanOrEqual(MAX_WAIT_MS);
      expect(firstSettledAfter).toBeLessThan(MAX_WAIT_MS + 1000);
      for (const message of messages) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.handle }));
    },
  );

  it('a receipt handle of a message that is gone is not an error', { timeout: 30_000 }, async () => {
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'gone', MessageBody: 'gone' }] }));
    const [message] = await receiveAll(1);
    if (message === undefined) throw new Error('no message received');
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.handle }));
    await new VisibilityBatches(sqs, async () => queueUrl, systemClock).change(message.handle, 30);
  });

  it('a request refused whole (no such queue) fails each change in it', async () => {
    const batches = new VisibilityBatches(sqs, async () => `${queueUrl}-no-such-queue`, systemClock);
    const results = await Promise.allSettled([batches.change('h1', 5), batches.change('h2', 5)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
