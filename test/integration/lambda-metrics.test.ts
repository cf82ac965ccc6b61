/**
 * The worker Lambda as the construct deploys it (`createJobsWorker`, with the
 * Lambda environment's markers set) runs one real slice over the emulator and
 * writes the engine's metrics as one EMF line at the end of the invocation;
 * the same entry outside Lambda writes none.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SliceKey } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createJobsWorker } from '../../lib/lambda/entries.ts';
import { DEFAULT_METRICS_NAMESPACE, ENGINE_METRICS } from '../../lib/lambda/metric-names.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
const saved = { ...process.env };

beforeAll(async () => {
  installation = await createTestInstallation();
  Object.assign(process.env, { CRONFENCE_PREFIX: installation.prefix, CRONFENCE_SHARDS: '1', POWERTOOLS_SERVICE_NAME: 'Test/Cron' });
});

afterAll(() => {
  for (const name of ['CRONFENCE_PREFIX', 'CRONFENCE_SHARDS', 'POWERTOOLS_SERVICE_NAME', 'AWS_LAMBDA_FUNCTION_NAME']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  installation?.destroy();
});

/** Sends a work message for a slice due a second ago, receives it, and hands it to `handler` as an SQS event; returns the EMF lines written. */
async function invokeWithOneSlice(
  handler: (event: SQSEvent) => Promise<unknown>,
  jobId: string,
): Promise<{ emf: Record<string, unknown>[]; key: SliceKey }> {
  const { key } = await enqueuedSlice(installation, { id: jobId, handler: 'metered' }, wholeSecond(-1000), ['metered']);
  await installation.runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
  const [message] = await installation.receiveSome(installation.resources.queueUrls.work, 1);
  const record = {
    messageId: message!.MessageId!,
    receiptHandle: message!.ReceiptHandle!,
    body: message!.Body!,
    attributes: { ApproximateReceiveCount: message!.Attributes?.ApproximateReceiveCount ?? '1' },
  };
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await handler({ Records: [record] } as unknown as SQSEvent);
  } finally {
    write.mockRestore();
  }
  const emf = lines.flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      return '_aws' in parsed ? [parsed] : [];
    } catch {
      return [];
    }
  });
  return { emf, key };
}

describe('the worker Lambda writes EMF metrics', () => {
  const registry = new HandlerRegistry([defineJob('metered', async () => {})]);

  it('in Lambda: one EMF line per invocation with the slice committed, its start lag and its commit latency', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'Test-CronWorker';
    const { emf, key } = await invokeWithOneSlice(createJobsWorker(registry), 'metered-in-lambda');
    expect(await installation.runtime.slices.getLedger(key)).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(emf).toHaveLength(1);
    const [document] = emf as [{ _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] } } & Record<string, unknown>];
    expect(document._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: DEFAULT_METRICS_NAMESPACE, Dimensions: [['service']] });
    expect(document.service).toBe('Test/Cron');
    expect(document[ENGINE_METRICS.succeeded.name]).toBe(1);
    expect(document[ENGINE_METRICS.startLag.name]).toBeGreaterThanOrEqual(1000);
    expect(document[ENGINE_METRICS.commitLatency.name]).toBeGreaterThan(0);
    expect(document).not.toHaveProperty(ENGINE_METRICS.takeovers.name);
  });

  it('outside Lambda: the same entry writes no EMF', async () => {
    delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    const { emf, key } = await invokeWithOneSlice(createJobsWorker(registry), 'metered-local');
    expect(await installation.runtime.slices.getLedger(key)).toMatchObject({ outcome: 'SUCCEEDED' });
    expect(emf).toEqual([]);
  });
});
