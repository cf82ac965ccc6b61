/**
 * Bad input is refused with an error naming the field and the value, and
 * nothing stored is lost: invalid job definitions, a missing table, and
 * malformed work messages in a batch beside a valid one.
 */
import type { SQSRecord } from 'aws-lambda';
import { DeleteMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidJobSpecError, MissingResourceError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { MAX_PAYLOAD_BYTES, type JobSpecInput } from '../../lib/core/job-spec.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler, type HandlerLog } from '../../lib/lambda/handlers.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

const KNOWN_HANDLERS = ['known-handler'];

const VALID: JobSpecInput = {
  id: 'valid-job',
  schedule: '*/10 * * * *',
  timeZone: 'Asia/Kolkata',
  handler: 'known-handler',
  payload: { merchants: 3 },
  policies: { leaseMs: 4000, heartbeatMs: 1000, maxAttempts: 3 },
};

let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation();
});

afterAll(() => {
  installation?.destroy();
});

const bigPayload = { blob: 'x'.repeat(MAX_PAYLOAD_BYTES) };
const bigPayloadBytes = Buffer.byteLength(JSON.stringify(bigPayload), 'utf8');

interface BadCase {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly field: string;
  readonly value: unknown;
}

const BAD_CASES: BadCase[] = [
  { name: 'cron with a minute of 61', input: { ...VALID, schedule: '61 * * * *' }, field: 'schedule', value: '61 * * * *' },
  { name: 'cron that is not a cron', input: { ...VALID, schedule: 'not a cron' }, field: 'schedule', value: 'not a cron' },
  { name: '7-field cron', input: { ...VALID, schedule: '0 0 0 1 1 * 2030' }, field: 'schedule', value: '0 0 0 1 1 * 2030' },
  { name: 'unknown time zone', input: { ...VALID, timeZone: 'Mars/Olympus' }, field: 'timeZone', value: 'Mars/Olympus' },
  { name: 'unknown handler', input: { ...VALID, handler: 'no-such-handler' }, field: 'handler', value: 'no-such-handler' },
  { name: 'lease below the minimum', input: { ...VALID, policies: { leaseMs: 10 } }, field: 'policies.leaseMs', value: 10 },
  {
    name: 'heartbeat more than half the lease',
    input: { ...VALID, policies: { leaseMs: 4000, heartbeatMs: 2500 } },
    field: 'policies.heartbeatMs',
    value: 2500,
  },
  { name: 'zero max attempts', input: { ...VALID, policies: { maxAttempts: 0 } }, field: 'policies.maxAttempts', value: 0 },
  { name: 'payload over 16 KiB', input: { ...VALID, payload: bigPayload }, field: 'payload', value: `${bigPayloadBytes} bytes` },
  { name: 'id with a colon', input: { ...VALID, id: 'valid-job:2' }, field: 'id', value: 'valid-job:2' },
];

describe('invalid job definitions', () => {
  it.each(BAD_CASES)('refuses $name, naming $field and its value, and keeps the stored job', async ({ input, field, value }) => {
    const jobs = installation.runtime.jobs(KNOWN_HANDLERS);
    // The first case creates the job; every later case finds it there (put replaces by id).
    const before = (await jobs.get(VALID.id)) ?? (await jobs.put(VALID)).job;
    expect(before.version).toBeGreaterThanOrEqual(1);

    const error = await jobs.put(input).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidJobSpecError);
    const invalid = error as InvalidJobSpecError;
    expect(invalid.field).toBe(field);
    expect(invalid.value).toEqual(value);
    expect(invalid.message).toContain(field);
    expect(invalid.message).toContain(String(value));
    // Field and value side by side, the value as JSON: `invalid policies.leaseMs 10: …`.
    expect(invalid.message).toContain(`${field} ${JSON.stringify(value)}`);

    const after = await jobs.get(VALID.id);
    expect(after).toBeDefined();
    expect(after?.version).toBe(before.version);
    expect(after?.schedule).toBe(VALID.schedule);
    expect(after?.timeZone).toBe(VALID.timeZone);
    expect(after?.handler).toBe(VALID.handler);
    expect(after?.nextFireAt).toBe(before.nextFireAt);
    expect(after?.updatedAt).toBe(before.updatedAt);
    expect(after?.payload).toEqual(VALID.payload);
    expect(after?.policies).toEqual(before.policies);
    if (field === 'id') expect(await jobs.get(String(value))).toBeUndefined();
  });

  it('the stored job still accepts a valid update after the refusals', async () => {
    // Guards the test above: a repository that refused everything would pass it.
    const jobs = installation.runtime.jobs(KNOWN_HANDLERS);
    const before = (await jobs.get(VALID.id)) ?? (await jobs.put(VALID)).job;
    const { job, created } = await jobs.put({ ...VALID, schedule: '*/15 * * * *' });
    expect(created).toBe(false);
    expect(job.version).toBe(before.version + 1);
    expect((await jobs.get(VALID.id))?.schedule).toBe('*/15 * * * *');
  });
});

describe('missing resources', () => {
  it('names a missing jobs table instead of passing the SDK error through', async () => {
    const runtime = createRuntime({ env: { ...installation.env, CRONFENCE_JOBS_TABLE: 'no-such-table' } });
    try {
      const error = await runtime
        .jobs()
        .get('x')
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(MissingResourceError);
      const missing = error as MissingResourceError;
      expect(missing.kind).toBe('table');
      expect(missing.resourceName).toBe('no-such-table');
      expect(missing.message).toContain('no-such-table');
    } finally {
      runtime.clients.dynamo.destroy();
      runtime.clients.sqs.destroy();
      runtime.clients.events.destroy();
    }
  });
});

describe('malformed work messages', () => {
  function record(messageId: string, receiptHandle: string, body: string): SQSRecord {
    return {
      messageId,
      receiptHandle,
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: installation.resources.queueUrls.work,
      awsRegion: process.env.AWS_REGION ?? 'us-east-1',
    };
  }

  it('dead-letters and drops malformed bodies without failing the batch, and processes the valid neighbour', async () => {
    const workUrl = installation.resources.queueUrls.work;
    const { key } = await enqueuedSlice(installation, { id: 'batch-neighbour', handler: 'known-handler' }, wholeSecond(), KNOWN_HANDLERS);
    await installation.runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
    const received = await eventually<Message>(async () => {
      const messages = await installation.receive(workUrl, 10, 30);
      return messages.find((message) => message.Body?.includes('"batch-neighbour"'));
    }, 10_000);

    const errors: { message: string; details: Record<string, unknown> }[] = [];
    const log: HandlerLog = { error: (message, details) => errors.push({ message, details }), info: () => {} };
    const runs: string[] = [];
    const handler = createWorkerHandler(
      installation.runtime,
      'w-batch',
      new HandlerRegistry([defineJob('known-handler', async (ctx) => void runs.push(ctx.executionKey))]),
      log,
    );
    const emptyJobId = '{"v":1,"jobId":""}';
    const response = await handler({
      Records: [
        record('malformed-garbage', 'fake-receipt-garbage', 'garbage'),
        record(received.MessageId ?? 'valid', received.ReceiptHandle ?? '', received.Body ?? ''),
        record('malformed-empty-job', 'fake-receipt-empty-job', emptyJobId),
      ],
    });

    // Nothing is retried: the malformed records are dead-lettered and deleted, the valid one committed.
    expect(response.batchItemFailures).toEqual([]);
    const expectedKey = executionKey(key.jobId, key.scheduledAt);
    expect(runs).toEqual([expectedKey]);
    const committed = installation.events.ofType('committed').filter((event) => event.executionKey === expectedKey);
    expect(committed).toHaveLength(1);
    expect(committed[0]?.worker).toBe('w-batch');
    expect((await installation.runtime.slices.get(key))?.status).toBe(SliceStatus.Succeeded);
    expect((await installation.runtime.slices.getLedger(key))?.outcome).toBe('SUCCEEDED');

    // Each malformed record was reported once; the valid one not at all.
    expect(errors.map((entry) => entry.details.messageId).sort()).toEqual(['malformed-empty-job', 'malformed-garbage']);

    // What the poller does with records not reported as failures; then nothing of this batch is left on the work queue.
    await installation.runtime.clients.sqs.send(new DeleteMessageCommand({ QueueUrl: workUrl, ReceiptHandle: received.ReceiptHandle }));
    await eventually(async () => ((await installation.depth(workUrl)) === 0 ? true : undefined), 10_000);

    const seen: Record<string, unknown>[] = [];
    const malformedBodies = () => seen.filter((body) => body.kind === 'malformed-message').map((body) => body.body);
    await eventually(async () => {
      for (const message of await installation.receive(installation.resources.queueUrls.deadLetter, 10, 60)) {
        seen.push(JSON.parse(message.Body ?? 'null') as Record<string, unknown>);
      }
      return malformedBodies().length >= 2 ? true : undefined;
    }, 15_000);
    expect(malformedBodies().sort()).toEqual([emptyJobId, 'garbage'].sort());
    for (const body of seen.filter((entry) => entry.kind === 'malformed-message')) {
      expect(body.queue).toBe('work');
      expect(typeof body.reason).toBe('string');
      expect(String(body.reason).length).toBeGreaterThan(0);
    }
    expect(seen.filter((body) => body.kind === 'malformed-message' && body.body === emptyJobId)[0]?.reason).toContain('jobId');
  });

  it('dead-letters a message naming a slice that does not exist, or one far beyond any lookahead, with the reason', async () => {
    const errors: string[] = [];
    const log: HandlerLog = { error: (message, details) => errors.push(`${message} ${JSON.stringify(details)}`), info: () => {} };
    const handler = createWorkerHandler(installation.runtime, 'w-unrunnable', new HandlerRegistry([]), log);
    const missing = JSON.stringify({ v: 1, jobId: 'never-created', scheduledAt: wholeSecond() });
    const farAhead = JSON.stringify({ v: 1, jobId: 'never-created', scheduledAt: wholeSecond(30 * 86_400_000) });
    const response = await handler({
      Records: [record('unrunnable-missing', 'fake-1', missing), record('unrunnable-far', 'fake-2', farAhead)],
    });
    expect(response.batchItemFailures).toEqual([]);
    const seen: Record<string, unknown>[] = [];
    await eventually(async () => {
      for (const message of await installation.receive(installation.resources.queueUrls.deadLetter, 10, 60)) {
        seen.push(JSON.parse(message.Body ?? 'null') as Record<string, unknown>);
      }
      return seen.filter((body) => body.kind === 'unrunnable-message').length >= 2 ? true : undefined;
    }, 15_000);
    const unrunnable = seen.filter((body) => body.kind === 'unrunnable-message');
    expect(unrunnable.find((body) => body.body === missing)?.reason).toBe('no such slice exists');
    expect(unrunnable.find((body) => body.body === farAhead)?.reason).toMatch(
      /no such slice, and .* is further ahead than any scan creates slices/,
    );
  });
});
