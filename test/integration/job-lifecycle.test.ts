/**
 * Everyday operations leave exactly one live definition: pause, resume,
 * re-enable, delete and re-add, and a put with a new schedule, payload or
 * `enabled`. Real JobRepository and Scanner over the emulator; the slices
 * are read back from the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobNotFoundError } from '../../lib/core/errors.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { definitionOf } from '../../lib/core/ports.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { JobRepository } from '../../lib/aws/dynamo/job-repository.ts';
import { sleep, systemClock } from '../../lib/core/clock.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
let jobs: JobRepository;

beforeAll(async () => {
  installation = await createTestInstallation();
  jobs = installation.runtime.jobs();
});
afterAll(() => installation?.destroy());

const EVERY_5S = '*/5 * * * * *';

function spec(id: string, overrides: Partial<JobSpecInput> = {}): JobSpecInput {
  return { id, schedule: EVERY_5S, handler: 'test-handler', ...overrides };
}

async function scan(): Promise<void> {
  await installation.runtime.scanner('s1').scanShard(0);
}

async function slicesOf(id: string): Promise<Slice[]> {
  return jobs.slicesOf(id, 0);
}

function byStatus(slices: readonly Slice[], status: string): Slice[] {
  return slices.filter((slice) => slice.status === status);
}

/** Instants of `id`'s slices that a worker would run now. */
async function runnable(id: string): Promise<number[]> {
  return byStatus(await slicesOf(id), SliceStatus.Enqueued).map((slice) => slice.scheduledAt);
}

describe('job lifecycle', () => {
  it('a create whose reply was lost, sent again by the SDK, still reports created (seen on a cold emulator: "Created: false")', async () => {
    const clients = createAwsClients();
    let dropped = 0;
    let puts = 0;
    // Below the SDK's retry step: the first PutItem lands, then its reply is lost as a timeout the SDK retries.
    clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand') puts++;
        const output = await next(args);
        // The resend meets the landed item's condition (attribute_not_exists) and never gets here.
        if (context.commandName === 'PutItemCommand' && dropped++ === 0) throw Object.assign(new Error('reply lost (test)'), { name: 'TimeoutError', $metadata: {} });
        return output;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'dropFirstPutReply' },
    );
    try {
      const repository = new JobRepository(clients.dynamo, installation.runtime.config, systemClock);
      // Yearly, so no occurrence falls due between the two puts: every 5 s, a put that crossed a 5 s boundary first
      // advanced the job over the due occurrence (version 2) and then changed it (version 3); a CI run saw that.
      const { job, created } = await repository.put(spec('lost-reply', { schedule: '0 0 0 1 1 *' }));
      expect({ dropped, puts }).toEqual({ dropped: 1, puts: 2 });
      expect(created).toBe(true);
      expect(job).toMatchObject({ id: 'lost-reply', version: 1, generation: 1 });
      expect(await repository.put(spec('lost-reply', { schedule: '0 0 0 2 1 *' }))).toMatchObject({ created: false, job: { version: 2 } });
    } finally {
      destroyAwsClients(clients);
    }
  });

  it('a delete whose skip of a pending slice landed unanswered, sent again by the SDK, still counts that slice (seen in CI: 23 of 24)', async () => {
    await jobs.put(spec('lost-skip-reply'));
    await scan();
    const created = await runnable('lost-skip-reply');
    const clients = createAwsClients();
    let dropped = 0;
    // The first skip lands, then its reply is lost as a timeout the SDK retries; the resend meets its own skip.
    clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const output = await next(args);
        const input = args.input as { UpdateExpression?: string };
        if (context.commandName === 'UpdateItemCommand' && input.UpdateExpression?.includes(':skipped') && dropped++ === 0) {
          throw Object.assign(new Error('reply lost (test)'), { name: 'TimeoutError', $metadata: {} });
        }
        return output;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'dropFirstSkipReply' },
    );
    try {
      const repository = new JobRepository(clients.dynamo, installation.runtime.config, systemClock);
      const { skipped } = await repository.delete('lost-skip-reply');
      expect(dropped).toBeGreaterThan(1);
      expect(skipped).toBe(created.length);
      expect(await runnable('lost-skip-reply')).toEqual([]);
    } finally {
      destroyAwsClients(clients);
    }
  });

  it('a change before any scan took up the due occurrences records them: SKIPPED with its reason, not left without a slice', async () => {
    const { job } = await jobs.put(spec('changed-before-scan', { schedule: '* * * * * *' }));
    await sleep(2200);
    const { skipped } = await jobs.pause('changed-before-scan');
    const slices = await slicesOf('changed-before-scan');
    // Two seconds of a per-second job were due; none was scanned.
    expect(slices.length).toBeGreaterThanOrEqual(2);
    expect(slices[0]?.scheduledAt).toBe(job.nextFireAt);
    expect(skipped).toBe(slices.length);
    for (const slice of slices) expect(slice).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', generation: 1 });
    // Nothing is left behind the job: resuming does not bring those instants back.
    const resumed = await jobs.resume('changed-before-scan');
    expect(resumed.job.nextFireAt).toBeGreaterThan(Math.max(...slices.map((slice) => slice.scheduledAt)));
  });

  it('resume puts a paused job back in the due index (it used to fail on the reserved word "shard")', async () => {
    await jobs.put(spec('resume-me'));
    await jobs.pause('resume-me');
    const { job } = await jobs.resume('resume-me');
    expect(job.enabled).toBe(true);
    expect((await jobs.require('resume-me')).enabled).toBe(true);
    await scan();
    expect((await runnable('resume-me')).length).toBeGreaterThan(10);
  });

  it('pause skips every pending slice with the reason; re-enabling by put runs the same instants again', async () => {
    await jobs.put(spec('pause-reenable'));
    await scan();
    const before = await runnable('pause-reenable');
    expect(before.length).toBeGreaterThan(10);

    const { skipped } = await jobs.pause('pause-reenable');
    expect(skipped).toBe(before.length);
    const paused = await slicesOf('pause-reenable');
    expect(byStatus(paused, SliceStatus.Enqueued)).toEqual([]);
    expect(new Set(byStatus(paused, SliceStatus.Skipped).map((slice) => slice.skipReason))).toEqual(new Set(['paused']));
    await scan();
    expect(await runnable('pause-reenable')).toEqual([]);

    await jobs.put(spec('pause-reenable'));
    await scan();
    const after = await runnable('pause-reenable');
    // Every future instant that was skipped at pause is enqueued again (they were stuck SKIPPED before).
    const stillFuture = before.filter((at) => at > Date.now() + 2000);
    expect(stillFuture.length).toBeGreaterThan(5);
    for (const at of stillFuture) expect(after).toContain(at);
  });

  it('delete then re-add under the same id runs the new job; the old pending slices, overdue ones too, are settled', async () => {
    await jobs.put(spec('delete-readd'));
    await scan();
    const created = await runnable('delete-readd');
    const { deleted, skipped } = await jobs.delete('delete-readd');
    expect(deleted).toBe(true);
    expect(skipped).toBe(created.length);
    expect(await jobs.get('delete-readd')).toBeUndefined();
    expect((await jobs.list()).map((job) => job.id)).not.toContain('delete-readd');
    await expect(jobs.pause('delete-readd')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await jobs.delete('delete-readd')).toEqual({ deleted: false, skipped: 0 });

    const { job, created: isNew } = await jobs.put(spec('delete-readd', { payload: { v: 2 } }));
    expect(isNew).toBe(true);
    await scan();
    const fresh = byStatus(await slicesOf('delete-readd'), SliceStatus.Enqueued);
    expect(fresh.length).toBeGreaterThan(10);
    for (const slice of fresh) expect(slice).toMatchObject({ generation: job.generation, payload: { v: 2 } });
  });

  it('disabling by put settles the pending slices and creates no more', async () => {
    await jobs.put(spec('disable-by-put'));
    await scan();
    expect((await runnable('disable-by-put')).length).toBeGreaterThan(10);
    const { skipped } = await jobs.put(spec('disable-by-put', { enabled: false }));
    expect(skipped).toBeGreaterThan(10);
    await scan();
    expect(await runnable('disable-by-put')).toEqual([]);
    expect(new Set(byStatus(await slicesOf('disable-by-put'), SliceStatus.Skipped).map((slice) => slice.skipReason))).toEqual(
      new Set(['disabled']),
    );
  });

  it('a schedule and payload change leaves only the new definition runnable', async () => {
    await jobs.put(spec('reschedule', { schedule: '*/10 * * * * *', payload: { v: 1 } }));
    await scan();
    const { job } = await jobs.put(spec('reschedule', { schedule: '5-59/10 * * * * *', payload: { v: 2 } }));
    await scan();
    const live = byStatus(await slicesOf('reschedule'), SliceStatus.Enqueued);
    expect(live.length).toBeGreaterThan(5);
    for (const slice of live) {
      expect(new Date(slice.scheduledAt).getUTCSeconds() % 10).toBe(5);
      expect(slice).toMatchObject({ payload: { v: 2 }, generation: job.generation });
    }
    const superseded = byStatus(await slicesOf('reschedule'), SliceStatus.Skipped);
    expect(superseded.length).toBeGreaterThan(5);
    for (const slice of superseded) expect(slice.skipReason).toBe('superseded');
  });

  it('a payload change at the same instants re-creates them with the new payload', async () => {
    await jobs.put(spec('repayload', { payload: { v: 1 } }));
    await scan();
    const first = await runnable('repayload');
    await jobs.put(spec('repayload', { payload: { v: 2 } }));
    await scan();
    const live = byStatus(await slicesOf('repayload'), SliceStatus.Enqueued);
    for (const slice of live) expect(slice.payload).toEqual({ v: 2 });
    const future = first.filter((at) => at > Date.now() + 2000);
    for (const at of future) expect(live.map((slice) => slice.scheduledAt)).toContain(at);
  });

  it('storing the definition a job already has changes nothing', async () => {
    const { job } = await jobs.put(spec('same-again', { payload: { a: 1, b: 2 } }));
    await scan();
    const before = await runnable('same-again');
    const again = await jobs.put(spec('same-again', { payload: { b: 2, a: 1 } }));
    expect(again).toMatchObject({ created: false, skipped: 0 });
    expect(again.job.generation).toBe(job.generation);
    expect(await runnable('same-again')).toEqual(before);
  });

  it('pause settles a FAILED slice awaiting its retry and an overdue ENQUEUED one', async () => {
    const { slices } = installation.runtime;
    const { job } = await jobs.put(spec('settle-overdue', { schedule: '0 0 1 1 *' }));
    const overdue = Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000;
    const retrying = Math.floor((Date.now() - 60_000) / 1000) * 1000;
    const created = await slices.enqueue(
      definitionOf(job),
      [overdue, retrying].map((scheduledAt) => ({ jobId: job.id, scheduledAt, sweepAt: scheduledAt + 30_000 })),
      Date.now(),
    );
    expect(created).toHaveLength(2);
    const retryKey = { jobId: job.id, scheduledAt: retrying };
    const claim = await slices.claim(retryKey, 'w1', Date.now());
    expect(claim.won).toBe(true);
    await slices.recordFailure(retryKey, 1, { now: Date.now(), error: 'boom', nextAttemptAt: Date.now() + 60_000, sweepAt: Date.now() + 90_000 });

    const { skipped } = await jobs.pause('settle-overdue');
    expect(skipped).toBe(2);
    expect(await slices.get({ jobId: job.id, scheduledAt: overdue })).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(await slices.get(retryKey)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', fence: 1 });
  });
});
