/**
 * A worker reads the job of each scanner's message before its claim (the
 * claim creates the slice from the stored definition). Against the emulator,
 * through the runtime's own worker: the ten messages of one batch, run at
 * once as the worker handler runs them, read their jobs with one consistent
 * BatchGetItem, not ten GetItems, and every slice commits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { wholeSecond } from '../support/slices.ts';

const BATCH = 10;

let installation: TestInstallation;
const jobReads: { command: string; consistent: boolean; keys: number }[] = [];

beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_WORK_QUEUE_VISIBILITY_MS: '120000' } });
  const jobsTable = installation.runtime.config.jobsTable;
  installation.runtime.clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        TableName?: string;
        ConsistentRead?: boolean;
        RequestItems?: Record<string, { Keys: unknown[]; ConsistentRead?: boolean }>;
      };
      if (context.commandName === 'GetItemCommand' && input.TableName === jobsTable)
        jobReads.push({ command: 'GetItem', consistent: input.ConsistentRead === true, keys: 1 });
      const batch = input.RequestItems?.[jobsTable];
      if (context.commandName === 'BatchGetItemCommand' && batch)
        jobReads.push({ command: 'BatchGetItem', consistent: batch.ConsistentRead === true, keys: batch.Keys.length });
      return next(args);
    },
    { step: 'initialize', name: 'recordJobReads' },
  );
});
afterAll(() => installation?.destroy());

describe("a batch's job reads", () => {
  it('share one consistent BatchGetItem, and every slice of the batch commits', { timeout: 60_000 }, async () => {
    const repository = installation.runtime.jobs(['noop']);
    const jobs = [];
    for (let index = 0; index < BATCH; index++)
      jobs.push((await repository.put({ id: `batch-read-${index}`, schedule: '* * * * * *', handler: 'noop' })).job);
    // The next second, an occurrence of every job (each job's first is the second after its put).
    const due = wholeSecond(1000);
    const { workQueue } = installation.runtime;
    await workQueue.send(jobs.map((job) => ({ jobId: job.id, scheduledAt: due, generation: job.generation, delaySeconds: 0 })));
    const url = installation.resources.queueUrls.work;
    const received = [];
    while (received.length < BATCH) received.push(...(await installation.receive(url, BATCH - received.length, 120)));

    const worker = installation.runtime.worker('batch-reader', new HandlerRegistry([defineJob('noop', async () => {})]));
    jobReads.length = 0;
    const dispositions = await Promise.all(
      received.map((message) =>
        worker.process({ body: message.Body!, receiptHandle: message.ReceiptHandle!, messageId: message.MessageId }),
      ),
    );
    expect(dispositions).toEqual(Array(BATCH).fill('delete'));
    expect(jobReads).toEqual([{ command: 'BatchGetItem', consistent: true, keys: BATCH }]);
    const slices = await Promise.all(jobs.map((job) => installation.runtime.slices.get({ jobId: job.id, scheduledAt: due })));
    expect(slices.map((slice) => slice?.status)).toEqual(Array(BATCH).fill('SUCCEEDED'));
  });
});
