/**
 * The job-change use case (engine/job-repository.ts) over the in-memory
 * stores, where a fault can be put between its writes: a change whose settle
 * fails after its write leaves its settle record, and the retry (the same
 * call, or any other change of the job) finishes it, as
 * test/integration/job-change-faults.test.ts shows over DynamoDB.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { SliceStore } from '../../lib/core/ports.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { JobRepository } from '../../lib/engine/job-repository.ts';
import { createMemoryInstallation, InMemoryJobStore } from '../../lib/memory/index.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const EVERY_5S = '*/5 * * * * *';

function rig() {
  const clock = new ManualClock(T0);
  const memory = createMemoryInstallation({ clock });
  let failNextSettle = false;
  const slices: Pick<SliceStore, 'settleAbsent'> = {
    settleAbsent: (...args) => {
      if (failNextSettle) {
        failNextSettle = false;
        return Promise.reject(new Error('refused (test)'));
      }
      return memory.slices.settleAbsent(...args);
    },
  };
  const jobs = new JobRepository({
    jobs: new InMemoryJobStore(memory.tables),
    reader: memory.jobReader,
    slices,
    wheel: memory.wheel,
    clock,
    shardCount: 1,
  });
  return { clock, memory, jobs, failNextSettle: () => (failNextSettle = true) };
}

describe('a job change over the in-memory stores', () => {
  it.each([
    ['an edit', 'superseded', (jobs: JobRepository) => jobs.put({ id: 'job', schedule: '*/7 * * * * *', handler: 'h' })],
    ['a pause', 'paused', (jobs: JobRepository) => jobs.pause('job')],
    ['a delete', 'deleted', (jobs: JobRepository) => jobs.delete('job')],
  ])('%s whose settle fails: the settle record stays, and the retry records every due occurrence SKIPPED', async (_, reason, change) => {
    const { clock, memory, jobs, failNextSettle } = rig();
    await jobs.put({ id: 'job', schedule: EVERY_5S, handler: 'h' });
    clock.set(T0 + 60_000);
    failNextSettle();
    await expect(change(jobs)).rejects.toThrow(/refused \(test\)/);
    expect(memory.tables.wheelShard(0).settles.size).toBe(1);
    await change(jobs);
    expect(memory.tables.wheelShard(0).settles.size).toBe(0);
    const due = occurrencesBetween({ cron: EVERY_5S, timeZone: 'UTC' }, T0, T0 + 60_000, 100);
    expect(due).toHaveLength(12);
    const slices = await jobs.slicesOf('job', T0);
    expect(slices.map((slice) => [slice.scheduledAt, slice.status, slice.skipReason])).toEqual(
      due.map((at) => [at, SliceStatus.Skipped, reason]),
    );
  });

  it('a write on a version that moved on is refused, and the change is planned again from a fresh read', async () => {
    const { memory, jobs } = rig();
    const { job } = await jobs.put({ id: 'job', schedule: EVERY_5S, handler: 'h' });
    const store = new InMemoryJobStore(memory.tables);
    const stale = {
      previous: { ...job, version: job.version - 1 },
      next: { ...job, version: job.version },
      shard: 0,
      inbox: undefined,
      settle: undefined,
    };
    expect(await store.writeChange(stale)).toBe(false);
    expect((await jobs.pause('job')).job).toMatchObject({ enabled: false, version: job.version + 1 });
  });
});
