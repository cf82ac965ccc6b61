/**
 * Queue URLs that carry a host this machine cannot resolve, as a user's own
 * LocalStack hands out by default (sqs.<region>.localhost.localstack.cloud:4566),
 * work against the emulator in use: with AWS_ENDPOINT_URL set, the SQS client
 * sends to the endpoint and the emulator finds the queue from the URL's path.
 */
import { DeleteMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

/** The same queue, reached through a host that never resolves (RFC 6761 .invalid). */
function unresolvable(queueUrl: string): string {
  const url = new URL(queueUrl);
  return `http://sqs.${process.env.AWS_REGION ?? 'us-east-1'}.localstack.invalid:4566${url.pathname}`;
}

describe('queue URL with an unresolvable host', () => {
  it('sends, receives and deletes through the configured endpoint', async () => {
    const { runtime, resources } = installation;
    const queueUrl = unresolvable(resources.queueUrls.deadLetter);
    await runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'via-endpoint' }));
    const [message] = await installation.receiveSome(resources.queueUrls.deadLetter, 1);
    expect(message?.Body).toBe('via-endpoint');
    await runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message!.ReceiptHandle }));
    expect(await installation.depth(resources.queueUrls.deadLetter)).toBe(0);
  });
});
