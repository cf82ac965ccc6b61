/**
 * `cronfence/client` against the emulator: schedules created, changed and
 * deleted from code (validated by parseJobSpec, stored with origin
 * `runtime`), never touching a job the CDK stack declares; trigger, pause
 * and listRuns from code.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  InvalidJobSpecError,
  JobExistsError,
  JobNotFoundError,
  JobOwnershipError,
  type CronfenceClient,
} from '../../lib/client/index.ts';
import { onJobEvent } from '../../lib/lambda/jobs-resource.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
let client: CronfenceClient;
beforeAll(async () => {
  installation = await createTestInstallation();
  client = createClient({
    env: { ...installation.env, CRONFENCE_ACTOR: 'billing-service' },
    clients: installation.runtime.clients,
    knownHandlers: ['settle'],
  });
});
afterAll(() => {
  client?.close();
  installation?.destroy();
});

const HOURLY = '0 * * * *';

describe('cronfence/client', () => {
  it('creates a runtime job per tenant, validated as the CLI validates', async () => {
    const job = await client.createJob({
      id: 'settle-tenant-1',
      schedule: HOURLY,
      handler: 'settle',
      payload: { tenant: 1 },
      group: 'tenants',
    });
    expect(job).toMatchObject({ origin: 'runtime', group: 'tenants', version: 1 });
    expect(
      await client.createJob({ id: 'settle-tenant-1', schedule: HOURLY, handler: 'settle', payload: { tenant: 1 }, group: 'tenants' }),
    ).toMatchObject({ version: 1 });
    await expect(client.createJob({ id: 'settle-tenant-1', schedule: '*/5 * * * *', handler: 'settle' })).rejects.toThrow(JobExistsError);
    await expect(client.createJob({ id: 'bad', schedule: '61 * * * *', handler: 'settle' })).rejects.toThrow(InvalidJobSpecError);
    await expect(client.createJob({ id: 'bad', schedule: HOURLY, handler: 'nope' })).rejects.toThrow('invalid handler "nope"');
    expect(await client.getJob('bad')).toBeUndefined();
  });

  it('sets a start precision, stored only when not the default; a bad one is refused naming the field and the value', async () => {
    const job = await client.createJob({
      id: 'poll-tenant-1',
      schedule: HOURLY,
      handler: 'settle',
      policies: { startPrecision: 'within-second' },
    });
    expect(job.policies.startPrecision).toBe('within-second');
    expect((await client.getJob('poll-tenant-1'))?.policies.startPrecision).toBe('within-second');
    // Back to the default: a new generation, and the stored policies hold no precision at all.
    const exact = await client.updateJob('poll-tenant-1', { policies: { startPrecision: 'exact' } });
    expect(exact.generation).toBe(job.generation + 1);
    expect((await client.getJob('poll-tenant-1'))?.policies).not.toHaveProperty('startPrecision');
    await expect(
      client.createJob({ id: 'bad', schedule: HOURLY, handler: 'settle', policies: { startPrecision: 'later' as 'exact' } }),
    ).rejects.toThrow('invalid policies.startPrecision "later": must be "exact" or "within-second"');
    expect(await client.getJob('bad')).toBeUndefined();
  });

  it('updates and deletes its own jobs, and refuses the jobs the CDK stack declares', async () => {
    await client.createJob({ id: 'settle-tenant-2', schedule: HOURLY, handler: 'settle', policies: { maxAttempts: 5 } });
    const updated = await client.updateJob('settle-tenant-2', { schedule: '30 * * * *', policies: { timeoutMs: 5000 } });
    expect(updated).toMatchObject({ schedule: '30 * * * *', policies: { maxAttempts: 5, timeoutMs: 5000 }, generation: 2 });
    await expect(client.updateJob('settle-tenant-2', { timeZone: 'Mars/Olympus' })).rejects.toThrow('invalid timeZone "Mars/Olympus"');

    const declared = {
      RequestType: 'Create',
      ResourceProperties: { ServiceToken: 'x', Job: JSON.stringify({ id: 'stack-nightly', schedule: HOURLY, handler: 'settle' }) },
    } as unknown as CloudFormationCustomResourceEvent;
    await onJobEvent(declared, (known) => installation.runtime.jobs(known));
    expect(await client.getJob('stack-nightly')).toMatchObject({ origin: 'cdk' });
    await expect(client.updateJob('stack-nightly', { schedule: '5 * * * *' })).rejects.toThrow(JobOwnershipError);
    await expect(client.deleteJob('stack-nightly')).rejects.toThrow(JobOwnershipError);
    expect(await client.getJob('stack-nightly')).toMatchObject({ schedule: HOURLY });

    expect(await client.deleteJob('settle-tenant-2')).toBe(true);
    expect(await client.deleteJob('settle-tenant-2')).toBe(false);
  });

  it('triggers, pauses with an end that survives an update, and lists runs with who did what', async () => {
    await client.createJob({ id: 'settle-tenant-3', schedule: HOURLY, handler: 'settle' });
    const triggered = await client.trigger('settle-tenant-3', { requestId: 'order-991', payload: { tenant: 3 }, reason: 'month end' });
    expect(await client.trigger('settle-tenant-3', { requestId: 'order-991' })).toMatchObject({ created: false, key: triggered.key });
    const runs = await client.listRuns('settle-tenant-3');
    expect(runs.map((run) => [run.executionKey, run.slice.status, run.slice.operator?.actor])).toEqual([
      [triggered.executionKey, 'ENQUEUED', 'billing-service'],
    ]);
    await expect(client.listRuns('no-such-job')).rejects.toThrow(JobNotFoundError);

    const until = new Date(Date.now() + 3 * 3_600_000);
    const { job } = await client.pause('settle-tenant-3', { reason: 'tenant offboarding', until });
    expect(job.pause).toMatchObject({ actor: 'billing-service', until: until.getTime() });
    const updated = await client.updateJob('settle-tenant-3', { payload: { tenant: 3, v: 2 } });
    expect(updated).toMatchObject({ enabled: false, pause: { reason: 'tenant offboarding', until: until.getTime() } });
    expect(updated.nextFireAt).toBeGreaterThanOrEqual(until.getTime());
    await expect(client.pause('settle-tenant-3', { reason: 'x', until: 'tomorrow' })).rejects.toThrow('invalid until "tomorrow"');
    expect((await client.resume('settle-tenant-3', { reason: 'back' })).job).toMatchObject({
      enabled: true,
      resumed: { actor: 'billing-service', reason: 'back' },
    });
  });
});
