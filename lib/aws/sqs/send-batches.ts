/**
 * SendMessageBatch in groups of 10 (the SQS maximum), re-sending entries SQS
 * reports as failed. A batch that still fails throws: the caller's sweep
 * re-sends whatever was not sent.
 */
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../core/clock.ts';

export const SQS_BATCH_SIZE = 10;
const RETRIES = 3;

export async function sendInBatches(
  sqs: SQSClient,
  url: string,
  entries: readonly SendMessageBatchRequestEntry[],
  clock: Clock,
): Promise<void> {
  const batches: SendMessageBatchRequestEntry[][] = [];
  for (let i = 0; i < entries.length; i += SQS_BATCH_SIZE) batches.push(entries.slice(i, i + SQS_BATCH_SIZE));
  await Promise.all(batches.map((batch) => sendBatch(sqs, url, batch, clock)));
}

async function sendBatch(sqs: SQSClient, url: string, batch: SendMessageBatchRequestEntry[], clock: Clock): Promise<void> {
  let pending = batch;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const result = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: pending }));
    const failed = new Set((result.Failed ?? []).map((entry) => entry.Id));
    pending = pending.filter((entry) => failed.has(entry.Id));
    if (pending.length === 0) return;
    if (attempt >= RETRIES) {
      throw new Error(`SQS refused ${pending.length} messages: ${JSON.stringify(result.Failed)}`);
    }
    await clock.sleep(50 * attempt);
  }
}
