/**
 * The local poller deletes a record as soon as the handler settles it, not
 * when its batch ends. Locally a message's visibility is the lease's (the work
 * queue's 3 s), not Lambda's function timeout: a record done early in a batch
 * held up by one slow claim surfaced again, was claimed again, and the batch's
 * late delete then removed it under its new receiver (a LocalStack drill with
 * its DynamoDB stopped for 6 s, 2026-12-03: 49 messages whose claim-phase
 * visibility extension, 1.3 s after their receive, found "Message does not
 * exist"). Without the early delete, `fast` below is delivered twice.
 */
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSleep, systemClock } from '../../lib/core/clock.ts';
import { PolledRecords } from '../../lib/local/polled-records.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
let sqs: SQSClient;
let queueUrl: string;

beforeAll(async () => {
  installation = await createTestInstallation();
  sqs = installation.runtime.clients.sqs;
  queueUrl = installation.resources.queueUrls.work;
});
afterAll(() => installation?.destroy());

describe('the local poller', () => {
  it('deletes a record the handler settled while the rest of its batch still runs', { timeout: 30_000 }, async () => {
    const deliveries: string[] = [];
    let slowRuns = 0;
    // The handler's event source, as a replica's runtime has it (lib/local/replica.ts).
    const records = new PolledRecords(
      sqs,
      async () => queueUrl,
      () => {},
      systemClock,
    );
    const poller = new SqsPoller({
      sqs,
      queueUrl,
      waitTimeSeconds: 1,
      records,
      handler: async (event: SQSEvent) => {
        const early = records.batchDeletes();
        await Promise.all(
          event.Records.map(async (record) => {
            deliveries.push(record.body);
            // The slow one holds its batch past the queue's 3 s visibility, once.
            if (record.body === 'slow' && slowRuns++ === 0) await realSleep(5000);
            early.delete(record.receiptHandle);
          }),
        );
        return { batchItemFailures: [] };
      },
    });
    await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: ['fast', 'slow'].map((body) => ({ Id: body, MessageBody: body })) }),
    );
    const running = poller.run();
    await realSleep(7000);
    poller.stop();
    await running;
    // Deleted at the batch's end, `fast` would have surfaced at 3 s and been delivered again.
    expect(deliveries.filter((body) => body === 'fast')).toEqual(['fast']);
    expect(deliveries.filter((body) => body === 'slow').length).toBeGreaterThanOrEqual(1);
  });
});
