/**
 * The test helper's side of the work queue: a slice's message is sent as the
 * scanner (or a sweep) sends it, received like the SQS event source receives
 * it, and handed to a real Worker.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { longPollRequestTimeoutMs } from '../aws/clients.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { decodeWorkMessage } from '../core/messages.ts';
import type { SliceKey } from '../core/slice.ts';
import { isFinal } from '../core/slice.ts';
import type { Runtime } from '../lambda/wiring.ts';

const RECEIVE_TIMEOUT_MS = 15_000;

/** Sends the slice's work message (no delay) and receives it back; others' messages are put back or, when final, deleted. */
export async function sendAndReceive(runtime: Runtime, key: SliceKey): Promise<Message> {
  await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
  const sqs = runtime.clients.sqs;
  const url = await queueUrl(sqs, runtime.config.workQueueName);
  const deadline = Date.now() + RECEIVE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
      { requestTimeout: longPollRequestTimeoutMs(1) },
    );
    let mine: Message | undefined;
    for (const message of Messages) {
      const other = decodeWorkMessage(message.Body ?? '');
      if (!mine && other.jobId === key.jobId && other.scheduledAt === key.scheduledAt) mine = message;
      else await putBack(runtime, url, message, other);
    }
    if (mine) return mine;
  }
  throw new Error(
    `the work message of ${key.jobId} at ${new Date(key.scheduledAt).toISOString()} did not arrive within ${RECEIVE_TIMEOUT_MS} ms`,
  );
}

export async function deleteMessage(runtime: Runtime, message: Message): Promise<void> {
  const url = await queueUrl(runtime.clients.sqs, runtime.config.workQueueName);
  await runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
}

async function putBack(runtime: Runtime, url: string, message: Message, key: SliceKey): Promise<void> {
  const slice = await runtime.slices.get(key);
  if (!slice || isFinal(slice.status)) {
    await runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
  } else {
    await runtime.clients.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }),
    );
  }
}
