import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { JOB_RESOURCE_TYPE } from '../../lib/cdk/scheduled-job.ts';
import { defineJob } from '../../lib/engine/define-job.ts';
import { registry } from '../../examples/jobs/index.ts';
import { EXAMPLE_WORKER, resourcesOf, synthScheduler, testApp } from './synth.ts';

function invalid(run: () => unknown): InvalidJobSpecError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidJobSpecError) return error;
    throw error;
  }
  throw new Error('expected an InvalidJobSpecError');
}

describe('addJob', () => {
  it('writes the validated job, with defaults filled in, as the custom resource payload', () => {
    const { template } = synthScheduler({ shardCount: 3, alarms: { enabled: false } }, (scheduler) =>
      scheduler.addJob('payroll', {
        schedule: '0 9 * * 1-5',
        timeZone: 'Europe/Berlin',
        handler: 'every-minute',
        payload: { run: 'weekly' },
      }),
    );
    const resources = Object.values(resourcesOf(template, JOB_RESOURCE_TYPE));
    expect(resources).toHaveLength(1);
    const properties = resources[0]?.Properties as { Job: string; ShardCount: string; KnownHandlers: string[]; ServiceToken: unknown };
    expect(JSON.parse(properties.Job)).toEqual({
      id: 'payroll',
      schedule: '0 9 * * 1-5',
      timeZone: 'Europe/Berlin',
      dst: { gap: 'shift', repeat: 'once' },
      handler: 'every-minute',
      enabled: true,
      payload: { run: 'weekly' },
      policies: DEFAULT_POLICIES,
      origin: 'cdk',
    });
    expect(properties.ShardCount).toBe('3');
    expect(properties.KnownHandlers).toEqual(registry.names());
    expect(JSON.stringify(properties.ServiceToken)).toContain('JobsProviderframeworkonEvent');
  });

  it('passes the DST policy of a job through to the custom resource, and refuses a bad one at synth', () => {
    const { template } = synthScheduler({ alarms: { enabled: false } }, (s) =>
      s.addJob('nightly', {
        schedule: '30 2 * * *',
        timeZone: 'America/New_York',
        dst: { gap: 'skip', repeat: 'twice' },
        handler: 'every-minute',
      }),
    );
    const properties = Object.values(resourcesOf(template, JOB_RESOURCE_TYPE))[0]?.Properties as { Job: string };
    expect(JSON.parse(properties.Job).dst).toEqual({ gap: 'skip', repeat: 'twice' });
    const error = invalid(() =>
      synthScheduler({}, (s) => s.addJob('bad-dst', { schedule: '30 2 * * *', dst: { gap: 'later' as 'skip' }, handler: 'every-minute' })),
    );
    expect([error.field, error.value]).toEqual(['dst.gap', 'later']);
  });

  it('applies the scheduler lease and heartbeat unless the job sets its own', () => {
    const { scheduler } = synthScheduler(
      { lease: Duration.seconds(8), heartbeat: Duration.seconds(2), alarms: { enabled: false } },
      (s) => {
        s.addJob('a', { schedule: '* * * * *', handler: 'every-minute' });
        s.addJob('b', { schedule: '* * * * *', handler: 'every-minute', policies: { leaseMs: 10_000 } });
      },
    );
    expect(scheduler.declaredJobs.get('a')?.spec.policies).toMatchObject({ leaseMs: 8000, heartbeatMs: 2000 });
    expect(scheduler.declaredJobs.get('b')?.spec.policies).toMatchObject({ leaseMs: 10_000, heartbeatMs: 2000 });
  });

  it('throws at synth for a bad cron, naming the field and the value', () => {
    const error = invalid(() => synthScheduler({}, (s) => s.addJob('broken', { schedule: '61 * * * *', handler: 'every-minute' })));
    expect(error.field).toBe('schedule');
    expect(error.value).toBe('61 * * * *');
    expect(error.message).toContain('schedule');
    expect(error.message).toContain('61 * * * *');
  });

  it('declares a start precision; a bad one throws at synth naming the field and the value', () => {
    const { scheduler } = synthScheduler({ alarms: { enabled: false } }, (s) =>
      s.addJob('cheap', { schedule: '* * * * *', handler: 'every-minute', policies: { startPrecision: 'within-second' } }),
    );
    expect(scheduler.declaredJobs.get('cheap')?.spec.policies.startPrecision).toBe('within-second');
    const error = invalid(() =>
      synthScheduler({}, (s) =>
        s.addJob('bad', { schedule: '* * * * *', handler: 'every-minute', policies: { startPrecision: 'soon' as 'exact' } }),
      ),
    );
    expect([error.field, error.value]).toEqual(['policies.startPrecision', 'soon']);
  });

  it('throws at synth for a bad time zone, an unknown handler and a timeout the worker cannot hold', () => {
    expect(
      invalid(() => synthScheduler({}, (s) => s.addJob('tz', { schedule: '* * * * *', timeZone: 'Mars/Olympus', handler: 'every-minute' })))
        .field,
    ).toBe('timeZone');
    const unknown = invalid(() => synthScheduler({}, (s) => s.addJob('h', { schedule: '* * * * *', handler: 'no-such-handler' })));
    expect([unknown.field, unknown.value]).toEqual(['handler', 'no-such-handler']);
    const slow = invalid(() =>
      synthScheduler({ workerTimeout: Duration.minutes(1) }, (s) =>
        s.addJob('slow', { schedule: '* * * * *', handler: 'every-minute', policies: { timeoutMs: 55_000 } }),
      ),
    );
    expect([slow.field, slow.value]).toEqual(['policies.timeoutMs', 55_000]);
    expect(() =>
      synthScheduler({}, (s) => [1, 2].forEach(() => s.addJob('twice', { schedule: '* * * * *', handler: 'every-minute' }))),
    ).toThrow(/added twice/);
  });

  it('accepts a defineJob handler object, and any handler name with a custom worker entry and no registry', () => {
    const custom = defineJob('custom-report', async () => {});
    const { scheduler } = synthScheduler({ workerEntry: EXAMPLE_WORKER.workerEntry, alarms: { enabled: false } }, (s) =>
      s.addJob('report', { schedule: '0 2 * * *', handler: custom }),
    );
    expect(scheduler.knownHandlers).toBeUndefined();
    expect(scheduler.declaredJobs.get('report')?.spec.handler).toBe('custom-report');
    expect(() =>
      synthScheduler({ workerEntry: EXAMPLE_WORKER.workerEntry, handlers: ['other'] }, (s) =>
        s.addJob('report', { schedule: '0 2 * * *', handler: custom }),
      ),
    ).toThrow(InvalidJobSpecError);
  });

  it('declares the merchant settlement and two other jobs in the example stack', () => {
    const template = Template.fromStack(new SettlementStack(testApp(), 'Example'));
    const jobs = Object.values(resourcesOf(template, JOB_RESOURCE_TYPE)).map((r) => JSON.parse((r.Properties as { Job: string }).Job));
    expect(jobs.map((job) => job.id).sort()).toEqual(['five-second-probe', 'merchant-settlement', 'minutely-probe']);
    expect(jobs.find((job) => job.id === 'merchant-settlement')).toMatchObject({
      schedule: '0 0 6 1 * *',
      timeZone: 'Asia/Kolkata',
      handler: 'merchant-settlement',
      payload: { merchants: 1200 },
    });
  });
});
