/**
 * A worker that dies with a long poll open leaves the poll on the server,
 * which hands it the next message that becomes visible (hidden then for the
 * queue's visibility timeout, to a process that is gone). The holder's own
 * message comes back at the earliest two seconds after its death (visibility
 * lease − heartbeat after a heartbeat less than a heartbeat before it), so
 * the local poller's long poll must end sooner, or a dead worker's poll
 * swallows its own slice and failover grows by a visibility timeout (6.2 s,
 * seen in a 300 s drill). Real SQS behaves the same way; Lambda's event
 * source does its own polling.
 */
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { realSleep } from '../../lib/core/clock.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

describe('a poller that dies mid-poll', () => {
  it('leaves no poll open long enough to take a message that surfaces 1.5 s after its death', { timeout: 30_000 }, async () => {
    const queueUrl = installation.resources.queueUrls.work;
    const dying = createAwsClients();
    const poller = new SqsPoller({ sqs: dying.sqs, queueUrl, handler: async () => ({ batchItemFailures: [] }), onError: () => {} });
    const polling = poller.run();
    await realSleep(300);
    // Death: the process's sockets close; the server keeps the poll it had already accepted.
    poller.stop();
    destroyAwsClients(dying);
    await realSleep(500);
    // Visible 1.5 s after the death; a standby is polling by then.
    await installation.runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'surfaces-after-death', DelaySeconds: 1 }),
    );
    const standby = await installation.runtime.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 2, MaxNumberOfMessages: 1 }),
    );
    expect(standby.Messages?.map((message) => message.Body)).toEqual(['surfaces-after-death']);
    await polling;
  });
});
