/**
 * Every job change leaves the job and its pickup consistent whatever single
 * request fails, or is finished by its retry: against the emulator, with the
 * repository's DynamoDB client refusing one request between the change's
 * writes (test/support/request-faults.ts), then the same call made again.
 * - the write that puts the new generation in the wheel's inbox (put of a new
 *   job, resume): the retry found "no change" and the job was never scanned;
 * - the settle of the ended generation's due occurrences (an edit, a pause, a
 *   delete): the retry found "no change" and left them without a record.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import type { JobRepository } from '../../lib/engine/job-repository.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { decodeScanMessage } from '../../lib/core/messages.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { refuseFirst, writesTo, type RequestMatch } from '../support/request-faults.ts';

const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const EVERY_5S = '*/5 * * * * *';
const clock = new ManualClock(T0);
let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation({ clock });
});
afterAll(() => installation?.destroy());

/** Runs `call` once over a client that refuses the first request `match` picks (it must fail), then again over a sound one. */
async function failThenRetry<T>(match: RequestMatch, call: (repository: JobRepository) => Promise<T>): Promise<T> {
  const faults = refuseFirst(match);
  try {
    await expect(
      call(dynamoJobRepository(faults.clients.dynamo, installation.runtime.config, clock, { random: Math.random })),
    ).rejects.toThrow(/refused \(test\)/);
    expect(faults.refused()).toBe(1);
  } finally {
    faults.destroy();
  }
  return call(installation.runtime.jobs());
}

describe('a job change with one request refused between its writes, then retried', () => {
  it('put of a new job: the job is in its shard inbox after the retry', async () => {
    clock.set(T0);
    const { job } = await failThenRetry(writesTo(installation.runtime.config.wheelTable), (jobs) =>
      jobs.put({ id: 'new-job', schedule: EVERY_5S, handler: 'h' }),
    );
    expect(await installation.runtime.wheel.inbox(0)).toContainEqual({
      jobId: 'new-job',
      generation: job.generation,
      from: job.nextFireAt,
    });
  });

  it('resume: the resumed generation is in its shard inbox after the retry', async () => {
    clock.set(T0);
    const jobs = installation.runtime.jobs();
    await jobs.put({ id: 'resumed-job', schedule: EVERY_5S, handler: 'h', enabled: false });
    clock.set(T0 + 20_000);
    const { job } = await failThenRetry(writesTo(installation.runtime.config.wheelTable), (repository) => repository.resume('resumed-job'));
    expect(job).toMatchObject({ enabled: true });
    expect(await installation.runtime.wheel.inbox(0)).toContainEqual({
      jobId: 'resumed-job',
      generation: job.generation,
      from: job.nextFireAt,
    });
  });

  const CHANGES: [string, string, string, (jobs: JobRepository) => Promise<unknown>][] = [
    ['an edit', 'edited-job', 'superseded', (jobs) => jobs.put({ id: 'edited-job', schedule: '*/7 * * * * *', handler: 'h' })],
    ['a pause', 'paused-job', 'paused', (jobs) => jobs.pause('paused-job')],
    ['a delete', 'deleted-job', 'deleted', (jobs) => jobs.delete('deleted-job')],
  ];
  it.each(CHANGES)("%s: the ended generation's due occurrences are all recorded SKIPPED after the retry", async (_, id, reason, change) => {
    clock.set(T0);
    await installation.runtime.jobs().put({ id, schedule: EVERY_5S, handler: 'h' });
    // A minute passes with no scan: twelve occurrences are due with no slice.
    clock.set(T0 + 60_000);
    const slicesTable = installation.runtime.config.slicesTable;
    await failThenRetry((command, input) => command === 'UpdateItemCommand' && input.TableName === slicesTable, change);
    const due = occurrencesBetween({ cron: EVERY_5S, timeZone: 'UTC' }, T0, T0 + 60_000, 100);
    expect(due).toHaveLength(12);
    const slices = await installation.runtime.jobs().slicesOf(id, T0);
    expect(slices.map((slice) => [slice.scheduledAt, slice.status, slice.skipReason])).toEqual(
      due.map((at) => [at, SliceStatus.Skipped, reason]),
    );
  });
});

describe('a job change that meets another transaction', () => {
  it('a put whose transaction is cancelled by a conflict (a scan removing the inbox entry then) is read and written again', async () => {
    clock.set(T0);
    const conflict = () =>
      new TransactionCanceledException({
        message: 'Transaction cancelled (test)',
        $metadata: {},
        CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
      });
    const faults = refuseFirst((command) => command === 'TransactWriteItemsCommand', conflict);
    try {
      const { job } = await dynamoJobRepository(faults.clients.dynamo, installation.runtime.config, clock, { random: Math.random }).put({
        id: 'conflicted-job',
        schedule: EVERY_5S,
        handler: 'h',
      });
      expect(faults.refused()).toBe(1);
      expect(job).toMatchObject({ version: 1, generation: 1 });
      expect(await installation.runtime.wheel.inbox(0)).toContainEqual({ jobId: 'conflicted-job', generation: 1, from: job.nextFireAt });
    } finally {
      faults.destroy();
    }
  });
});

describe('a change asks for a scan of its shard', () => {
  it('a put of a running job sends a scan request for its shard to the scan queue; a pause without an end does not', async () => {
    clock.set(T0);
    const jobs = installation.runtime.jobs();
    const put = await jobs.put({ id: 'prompt-job', schedule: EVERY_5S, handler: 'h' });
    expect(put.scanRequested).toBe(true);
    const received = await installation.receiveSome(installation.resources.queueUrls.scan, 10, 10_000);
    expect(received.map((message) => decodeScanMessage(message.Body ?? ''))).toContainEqual({ shard: put.job.shard });
    expect((await jobs.pause('prompt-job')).scanRequested).toBe(false);
  });
});
