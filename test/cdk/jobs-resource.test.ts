/**
 * The deploy-time path of `addJob`: the custom resource Lambda's onEvent,
 * fed the exact properties the construct synthesizes, against the emulator.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { JOB_RESOURCE_TYPE } from '../../lib/cdk/scheduled-job.ts';
import { onJobEvent, type RepositoryFactory } from '../../lib/lambda/jobs-resource.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { resourcesOf, synthScheduler } from './synth.ts';

let local: TestInstallation;
let repository: RepositoryFactory;
beforeAll(async () => {
  local = await createTestInstallation();
  repository = (known) =>
    dynamoJobRepository(local.runtime.clients.dynamo, local.runtime.config, systemClock, { random: Math.random, knownHandlers: known });
});
afterAll(() => local?.destroy());

/** The properties the construct synthesizes for one addJob call. */
function synthesizedProperties(schedule: string, id = 'nightly'): Record<string, unknown> {
  const { template } = synthScheduler({ alarms: { enabled: false } }, (s) =>
    s.addJob(id, { schedule, timeZone: 'Asia/Kolkata', handler: 'every-minute' }),
  );
  const [resource] = Object.values(resourcesOf(template, JOB_RESOURCE_TYPE));
  return { ServiceToken: 'arn:aws:lambda:us-east-1:000000000000:function:provider', ...(resource?.Properties ?? {}) };
}

function request(
  type: 'Create' | 'Update' | 'Delete',
  properties: Record<string, unknown>,
  physicalId?: string,
): CloudFormationCustomResourceEvent {
  const base = {
    ServiceToken: String(properties.ServiceToken),
    ResponseURL: 'https://example.invalid/response',
    StackId: 'arn:aws:cloudformation:us-east-1:000000000000:stack/test/1',
    RequestId: `req-${type}`,
    LogicalResourceId: 'CronJobnightly',
    ResourceType: JOB_RESOURCE_TYPE,
    ResourceProperties: properties as { ServiceToken: string },
  };
  if (type === 'Create') return { ...base, RequestType: 'Create' };
  if (type === 'Update')
    return {
      ...base,
      RequestType: 'Update',
      PhysicalResourceId: physicalId ?? 'nightly',
      OldResourceProperties: { ServiceToken: base.ServiceToken },
    };
  return { ...base, RequestType: 'Delete', PhysicalResourceId: physicalId ?? 'nightly' };
}

describe('jobs custom resource', () => {
  it('creates, updates and deletes the job through JobRepository', async () => {
    const created = await onJobEvent(request('Create', synthesizedProperties('0 2 * * *')), repository);
    expect(created.PhysicalResourceId).toBe('nightly');
    expect(created.Data).toMatchObject({ JobId: 'nightly', Version: 1, Created: 'true' });
    const stored = await repository(undefined).require('nightly');
    expect(stored).toMatchObject({ schedule: '0 2 * * *', timeZone: 'Asia/Kolkata', handler: 'every-minute', enabled: true, version: 1 });

    const updated = await onJobEvent(request('Update', synthesizedProperties('30 3 * * *')), repository);
    expect(updated).toMatchObject({ PhysicalResourceId: 'nightly', Data: { Version: 2, Created: 'false' } });
    expect((await repository(undefined).require('nightly')).schedule).toBe('30 3 * * *');

    const deleted = await onJobEvent(request('Delete', synthesizedProperties('30 3 * * *')), repository);
    expect(deleted.PhysicalResourceId).toBe('nightly');
    expect(await repository(undefined).get('nightly')).toBeUndefined();
  });

  it('gives a renamed job a new physical id, so CloudFormation deletes the old one', async () => {
    const renamed = await onJobEvent(request('Update', synthesizedProperties('0 4 * * *', 'nightly-v2'), 'nightly'), repository);
    expect(renamed.PhysicalResourceId).toBe('nightly-v2');
    await onJobEvent(request('Delete', {}, 'nightly-v2'), repository);
  });

  it('refuses an invalid job and an unknown handler with the same validation as the CLI, writing nothing', async () => {
    const properties = synthesizedProperties('0 2 * * *', 'tampered');
    const bad = { ...properties, Job: JSON.stringify({ ...JSON.parse(String(properties.Job)), schedule: '0 2 * *' }) };
    await expect(onJobEvent(request('Create', bad), repository)).rejects.toThrow(InvalidJobSpecError);
    const unknownHandler = { ...properties, KnownHandlers: ['something-else'] };
    await expect(onJobEvent(request('Create', unknownHandler), repository)).rejects.toThrow(/handler "every-minute"/);
    expect(await repository(undefined).get('tampered')).toBeUndefined();
  });

  it('treats a delete of a job that is gone, or of a table that is gone, as done', async () => {
    await expect(onJobEvent(request('Delete', {}, 'never-existed'), repository)).resolves.toEqual({ PhysicalResourceId: 'never-existed' });
    const gone: RepositoryFactory = (known) =>
      dynamoJobRepository(
        local.runtime.clients.dynamo,
        { ...local.runtime.config, jobsTable: `${local.prefix}-no-such-table` },
        systemClock,
        { random: Math.random, knownHandlers: known },
      );
    await expect(onJobEvent(request('Delete', {}, 'nightly'), gone)).resolves.toEqual({ PhysicalResourceId: 'nightly' });
  });
});
