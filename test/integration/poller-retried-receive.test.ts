/**
 * A receive whose first try was refused after a wait (a throttled or hung try, which the SDK tries again) is not a
 * reply held up on its way: only the try that answered can have hidden its messages. Timed from the call, the
 * worker read such a message as possibly visible again already and started its holder with the fast takeover
 * disarmed: a kill of that holder then failed over on the lease (over 5 s) instead of the message (3 s). And a reply
 * slow on its way back is counted from its try's send too: from its arrival, the holder believed its message hidden
 * longer than it was, and a standby took over the live holder (docs/simulation.md, loaded seed 7467).
 */
import { RequestThrottled, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { FinalizeRequestMiddleware, MiddlewareStack } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { realSleep, systemClock } from '../../lib/core/clock.ts';
import { PolledRecords } from '../../lib/local/polled-records.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

/** Refuses the first try of the first receive, 2 s after it was sent, as retryable throttling (nothing received). */
function refuseFirstReceiveTry(refusedAt: { value?: number }): FinalizeRequestMiddleware<object, object> {
  return (next, context) => async (args) => {
    if (context.commandName !== 'ReceiveMessageCommand' || refusedAt.value !== undefined) return next(args);
    await realSleep(2000);
    refusedAt.value = Date.now();
    throw Object.assign(new RequestThrottled({ $metadata: { httpStatusCode: 400 }, message: 'rate exceeded (test)' }), {
      $retryable: { throttling: true },
    });
  };
}

/**
 * Sends `body` to the work queue, polls it with a poller whose SQS client has `middleware` added, and returns the first
 * record received with the `hiddenSince` the poller gave it.
 */
async function firstPolled(
  body: string,
  middleware: FinalizeRequestMiddleware<object, object>,
): Promise<{ body: string; hiddenSince?: number } | undefined> {
  const queueUrl = installation.resources.queueUrls.work;
  await installation.runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  const clients = createAwsClients();
  (clients.sqs.middlewareStack as MiddlewareStack<object, object>).add(middleware, { step: 'finalizeRequest', priority: 'low' });
  const received: { body: string; hiddenSince?: number }[] = [];
  const records = new PolledRecords(
    clients.sqs,
    async () => queueUrl,
    () => {},
    systemClock,
  );
  const poller = new SqsPoller({
    sqs: clients.sqs,
    queueUrl,
    records,
    handler: async (event) => {
      received.push(...event.Records.map((record) => ({ body: record.body, hiddenSince: records.hiddenSince(record.receiptHandle) })));
      return { batchItemFailures: [] };
    },
  });
  const polling = poller.run();
  try {
    const [record] = await eventually(() => (received.length > 0 ? received : undefined), 15_000);
    return record;
  } finally {
    poller.stop();
    await polling;
    destroyAwsClients(clients);
  }
}

describe('the poller times a receive from the try that answered it', () => {
  it('gives a message received by a retried try the retry’s send time, not the first try’s', { timeout: 30_000 }, async () => {
    const refusedAt: { value?: number } = {};
    const startedAt = Date.now();
    const record = await firstPolled('after-a-refused-try', refuseFirstReceiveTry(refusedAt));
    expect(record?.body).toBe('after-a-refused-try');
    expect(refusedAt.value).toBeGreaterThanOrEqual(startedAt + 2000);
    // From the call, it would be its start: before the refusal by the 2 s the first try waited.
    expect(record?.hiddenSince).toBeGreaterThanOrEqual(refusedAt.value ?? Infinity);
  });

  it('gives a message whose reply was slow on its way back the try’s send time, not the reply’s arrival', { timeout: 30_000 }, async () => {
    const arrivedAt: { value?: number } = {};
    // SQS answered at once (a message is waiting) and the reply took 900 ms to arrive: within the long poll's wait.
    const record = await firstPolled('slow-on-its-way-back', (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'ReceiveMessageCommand' && arrivedAt.value === undefined) {
        await realSleep(900);
        arrivedAt.value = Date.now();
      }
      return result;
    });
    expect(record?.body).toBe('slow-on-its-way-back');
    // Counted from the arrival, the holder would believe its message hidden 900 ms longer than SQS hid it.
    expect(record?.hiddenSince).toBeLessThanOrEqual((arrivedAt.value ?? 0) - 900);
  });
});
