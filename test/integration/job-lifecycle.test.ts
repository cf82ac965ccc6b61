/**
 * Everyday operations leave exactly one live definition: pause, resume,
 * re-enable, delete and re-add, and a put with a new schedule, payload or
 * `enabled`. Real JobRepository, Scanner and Worker over the emulator, on a
 * manual clock: a scan writes no slice but sends each occurrence with its
 * generation's definition, so what a change does shows in what the next scan
 * sends, in what the change records for the occurrences already due, and in
 * what becomes of every message once a worker claims it (a message of a
 * generation the job has moved on from creates its slice SKIPPED, with the
 * change's reason; the new generation's message re-creates the instant and runs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobNotFoundError } from '../../lib/core/errors.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { WorkMessage } from '../../lib/core/ports.ts';
import { definitionOf } from '../../lib/core/job-record.ts';
import { occurrencesBetween, scheduleOf } from '../../lib/core/schedule.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { bucketOf } from '../../lib/core/wheel.ts';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import type { JobRepository } from '../../lib/engine/job-repository.ts';
import { ManualClock, systemClock } from '../../lib/core/clock.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { processInOrder, recordingRuntime, type RecordingQueue } from '../support/recording-queue.ts';

const LOOKAHEAD_MS = 30_000;
const clock = new ManualClock(Math.floor(Date.now() / 5000) * 5000);
let installation: TestInstallation;
let runtime: Runtime;
let queue: RecordingQueue;
let jobs: JobRepository;

beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_LOOKAHEAD_MS: String(LOOKAHEAD_MS) } });
  // The messages are kept, not sent: the tests hand them to a worker when their second has come.
  ({ runtime, queue } = recordingRuntime(installation, { clock }));
  jobs = runtime.jobs();
});
afterAll(() => installation?.destroy());

const EVERY_5S = '*/5 * * * * *';

function spec(id: string, overrides: Partial<JobSpecInput> = {}): JobSpecInput {
  return { id, schedule: EVERY_5S, handler: 'test-handler', ...overrides };
}

/** Scans the shard. @returns what it sent for `id`, in order. */
async function scan(id: string): Promise<WorkMessage[]> {
  const sent = queue.mark();
  await runtime.scanner('s1').scanShard(0);
  return sent.take().filter((message) => message.jobId === id);
}

async function slicesOf(id: string): Promise<Slice[]> {
  return jobs.slicesOf(id, 0);
}

function instants(messages: readonly WorkMessage[]): number[] {
  return messages.map((message) => message.scheduledAt);
}

/** Occurrences of `job` in `[from, to)`. */
function occurrences(job: Parameters<typeof scheduleOf>[0], from: number, to: number): number[] {
  return occurrencesBetween(scheduleOf(job), from, to, 1000);
}

/** The messages whose second has come by now. */
function dueNow(messages: readonly WorkMessage[]): WorkMessage[] {
  return messages.filter((message) => message.scheduledAt <= clock.now());
}

interface Run {
  readonly at: number;
  readonly payload: Record<string, unknown>;
}

/**
 * Hands `messages` to a worker in the order given, the clock moved on to the
 * last one's second if it is ahead; every message is let go (run, skipped or
 * dropped as a copy). @returns the runs.
 */
async function deliver(messages: readonly WorkMessage[]): Promise<Run[]> {
  clock.set(Math.max(clock.now(), ...instants(messages)));
  const runs: Run[] = [];
  const handlers = new HandlerRegistry([
    defineJob('test-handler', async (ctx) => void runs.push({ at: ctx.scheduledAt.getTime(), payload: ctx.payload })),
  ]);
  const dispositions = await processInOrder(runtime.worker('w1', handlers), messages);
  expect(dispositions.filter((disposition) => disposition !== 'delete')).toEqual([]);
  return runs;
}

/** A repository whose first reply to a matching UpdateItem is lost after it landed: the SDK sends it again. */
function losingFirstReply(
  matches: (input: { UpdateExpression?: string; ExpressionAttributeValues?: Record<string, unknown> }) => boolean,
): {
  repository: JobRepository;
  dropped: () => number;
  destroy: () => void;
} {
  const clients = createAwsClients();
  let dropped = 0;
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const output = await next(args);
      if (context.commandName === 'UpdateItemCommand' && matches(args.input as Parameters<typeof matches>[0]) && dropped++ === 0) {
        throw Object.assign(new Error('reply lost (test)'), { name: 'TimeoutError', $metadata: {} });
      }
      return output;
    },
    { step: 'finalizeRequest', priority: 'low', name: 'dropFirstReply' },
  );
  return {
    repository: dynamoJobRepository(clients.dynamo, runtime.config, clock, { random: Math.random }),
    dropped: () => dropped,
    destroy: () => destroyAwsClients(clients),
  };
}

describe('job lifecycle', () => {
  it('a create whose reply was lost, sent again by the SDK, still reports created (seen on a cold emulator: "Created: false")', async () => {
    const clients = createAwsClients();
    let dropped = 0;
    let puts = 0;
    // Below the SDK's retry step: the first write of the job (one transaction with its inbox entry) lands, then its
    // reply is lost as a timeout the SDK retries.
    clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') puts++;
        const output = await next(args);
        // The resend meets the landed item's condition (attribute_not_exists) and never gets here.
        if (context.commandName === 'TransactWriteItemsCommand' && dropped++ === 0)
          throw Object.assign(new Error('reply lost (test)'), { name: 'TimeoutError', $metadata: {} });
        return output;
      },
      { step: 'finalizeRequest', priority: 'low', name: 'dropFirstPutReply' },
    );
    try {
      const repository = dynamoJobRepository(clients.dynamo, installation.runtime.config, systemClock, { random: Math.random });
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
    const { job } = await jobs.put(spec('lost-skip-reply'));
    // Pending: slices waiting in the sweep index (the reconciler's, an operator's).
    const pending = [1, 2, 3].map((i) => ({
      jobId: job.id,
      scheduledAt: job.nextFireAt + i * 5000,
      sweepAt: job.nextFireAt + i * 5000 + 30_000,
    }));
    expect(await runtime.slices.enqueue(definitionOf(job), pending, clock.now())).toHaveLength(3);
    // The first skip lands, then its reply is lost as a timeout the SDK retries; the resend meets its own skip.
    const losing = losingFirstReply((input) => input.UpdateExpression?.includes(':skipped') === true);
    try {
      const { skipped } = await losing.repository.delete('lost-skip-reply');
      expect(losing.dropped()).toBeGreaterThan(1);
      expect(skipped).toBe(3);
      expect((await slicesOf('lost-skip-reply')).map((slice) => [slice.status, slice.skipReason])).toEqual(
        Array(3).fill([SliceStatus.Skipped, 'deleted']),
      );
    } finally {
      losing.destroy();
    }
  });

  it('a change whose record of a due occurrence landed unanswered, sent again by the SDK, still counts it', async () => {
    const { job } = await jobs.put(spec('lost-settle-reply', { schedule: '* * * * * *' }));
    // Three seconds due, no scan since: no slice.
    clock.advance(2500);
    const due = occurrences(job, job.nextFireAt, clock.now());
    expect(due).toHaveLength(3);
    // The first SKIPPED record lands, then its reply is lost as a timeout the SDK retries; the resend meets its own record.
    const losing = losingFirstReply((input) => input.ExpressionAttributeValues?.[':skipReason'] !== undefined);
    try {
      const { skipped } = await losing.repository.pause('lost-settle-reply');
      expect(losing.dropped()).toBeGreaterThan(1);
      expect(skipped).toBe(3);
      expect((await slicesOf('lost-settle-reply')).map((slice) => [slice.scheduledAt, slice.status, slice.skipReason])).toEqual(
        due.map((at) => [at, SliceStatus.Skipped, 'paused']),
      );
    } finally {
      losing.destroy();
    }
  });

  it('a change before any scan took up the due occurrences records them: SKIPPED with its reason, not left without a slice', async () => {
    const { job } = await jobs.put(spec('changed-before-scan', { schedule: '* * * * * *' }));
    clock.advance(2200);
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

  it('resume puts a paused job back in the schedule (it used to fail on the reserved word "shard")', async () => {
    await jobs.put(spec('resume-me'));
    await jobs.pause('resume-me');
    expect(await scan('resume-me')).toEqual([]);
    const { job } = await jobs.resume('resume-me');
    expect(job.enabled).toBe(true);
    expect((await jobs.require('resume-me')).enabled).toBe(true);
    // The next scan sends every occurrence from the resume to its horizon, for the resumed generation.
    const sent = await scan('resume-me');
    expect(sent.length).toBeGreaterThan(4);
    expect(instants(sent)).toEqual(occurrences(job, job.nextFireAt, bucketOf(clock.now() + LOOKAHEAD_MS)));
    expect(sent.every((message) => message.generation === job.generation)).toBe(true);
  });

  it('pause skips every occurrence of the paused definition with the reason; re-enabling by put runs the same instants again', async () => {
    const { job: first } = await jobs.put(spec('pause-reenable'));
    const before = await scan('pause-reenable');
    expect(before.length).toBeGreaterThan(4);

    // Some occurrences fall due before the pause, their messages on their way: the pause records them.
    clock.advance(6000);
    const due = occurrences(first, first.nextFireAt, clock.now());
    expect(due.length).toBeGreaterThan(0);
    const { skipped } = await jobs.pause('pause-reenable');
    expect(skipped).toBe(due.length);
    expect(await scan('pause-reenable')).toEqual([]);
    // Messages delivered while it is paused were sent for the generation the pause ended: they run nothing and
    // create nothing (the instants after the pause are no occurrence of a running definition).
    clock.advance(6000);
    const whilePaused = dueNow(before);
    expect(whilePaused.length).toBeGreaterThan(due.length);
    expect(await deliver(whilePaused)).toEqual([]);
    const paused = await slicesOf('pause-reenable');
    expect(paused.map((slice) => slice.scheduledAt)).toEqual(due);
    expect(new Set(paused.map((slice) => `${slice.status} ${slice.skipReason}`))).toEqual(new Set(['SKIPPED paused']));

    const { job: reenabled } = await jobs.put(spec('pause-reenable'));
    const after = await scan('pause-reenable');
    expect(after.every((message) => message.generation === reenabled.generation)).toBe(true);
    // Every instant sent before the pause that is still ahead is sent again for the new generation.
    const stillFuture = instants(before).filter((at) => at >= reenabled.nextFireAt);
    expect(stillFuture.length).toBeGreaterThanOrEqual(2);
    for (const at of stillFuture) expect(instants(after)).toContain(at);

    // The rest delivered, the old messages first: each instant from the re-enable on runs once, under the new generation.
    const runs = await deliver([...before.slice(whilePaused.length), ...after]);
    expect(runs.map((run) => run.at)).toEqual(instants(after));
    for (const slice of await slicesOf('pause-reenable')) {
      if (slice.scheduledAt < reenabled.nextFireAt)
        expect(slice).toMatchObject({ status: SliceStatus.Skipped, skipReason: 'paused', generation: first.generation });
      else expect(slice).toMatchObject({ status: SliceStatus.Succeeded, generation: reenabled.generation });
    }
  });

  it('delete then re-add under the same id runs the new job; the old occurrences, overdue ones too, are settled', async () => {
    const { job: first } = await jobs.put(spec('delete-readd'));
    const before = await scan('delete-readd');
    clock.advance(6000);
    const due = occurrences(first, first.nextFireAt, clock.now());
    expect(due.length).toBeGreaterThan(0);
    const { deleted, skipped } = await jobs.delete('delete-readd');
    expect(deleted).toBe(true);
    // The overdue occurrences, their messages still on their way, are recorded SKIPPED "deleted".
    expect(skipped).toBe(due.length);
    expect((await slicesOf('delete-readd')).map((slice) => [slice.scheduledAt, slice.status, slice.skipReason])).toEqual(
      due.map((at) => [at, SliceStatus.Skipped, 'deleted']),
    );
    expect(await jobs.get('delete-readd')).toBeUndefined();
    expect((await jobs.list()).map((job) => job.id)).not.toContain('delete-readd');
    await expect(jobs.pause('delete-readd')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await jobs.delete('delete-readd')).toEqual({ deleted: false, skipped: 0 });
    // Messages claimed while it is deleted find it gone.
    clock.advance(6000);
    const whileDeleted = dueNow(before);
    expect(await deliver(whileDeleted)).toEqual([]);

    const { job, created: isNew } = await jobs.put(spec('delete-readd', { payload: { v: 2 } }));
    expect(isNew).toBe(true);
    const fresh = await scan('delete-readd');
    expect(fresh.length).toBeGreaterThan(4);
    const runs = await deliver([...before.slice(whileDeleted.length), ...fresh]);
    expect(runs).toEqual(instants(fresh).map((at) => ({ at, payload: { v: 2 } })));
    for (const slice of await slicesOf('delete-readd')) {
      if (slice.scheduledAt < job.nextFireAt)
        expect(slice).toMatchObject({ status: SliceStatus.Skipped, skipReason: 'deleted', generation: first.generation });
      else expect(slice).toMatchObject({ status: SliceStatus.Succeeded, generation: job.generation, payload: { v: 2 } });
    }
  });

  it('disabling by put settles the occurrences already sent and sends no more', async () => {
    const { job: first } = await jobs.put(spec('disable-by-put'));
    const before = await scan('disable-by-put');
    expect(before.length).toBeGreaterThan(4);
    clock.advance(6000);
    const due = occurrences(first, first.nextFireAt, clock.now());
    const { skipped } = await jobs.put(spec('disable-by-put', { enabled: false }));
    expect(skipped).toBe(due.length);
    expect(skipped).toBeGreaterThan(0);
    expect(await scan('disable-by-put')).toEqual([]);
    expect(await deliver(before)).toEqual([]);
    // What was due is recorded; the messages of later instants create nothing.
    const slices = await slicesOf('disable-by-put');
    expect(slices.map((slice) => slice.scheduledAt)).toEqual(due);
    expect(new Set(slices.map((slice) => `${slice.status} ${slice.skipReason}`))).toEqual(new Set(['SKIPPED disabled']));
  });

  it('a schedule and payload change leaves only the new definition runnable', async () => {
    const { job: first } = await jobs.put(spec('reschedule', { schedule: '*/10 * * * * *', payload: { v: 1 } }));
    const before = await scan('reschedule');
    const { job } = await jobs.put(spec('reschedule', { schedule: '5-59/10 * * * * *', payload: { v: 2 } }));
    const after = await scan('reschedule');
    expect(before.length).toBeGreaterThan(1);
    expect(after.length).toBeGreaterThan(1);
    const runs = await deliver([...before, ...after]);
    expect(runs).toEqual(instants(after).map((at) => ({ at, payload: { v: 2 } })));
    for (const run of runs) expect(new Date(run.at).getUTCSeconds() % 10).toBe(5);
    const slices = await slicesOf('reschedule');
    const live = slices.filter((slice) => slice.status === SliceStatus.Succeeded);
    expect(live.map((slice) => slice.scheduledAt)).toEqual(instants(after));
    for (const slice of live) expect(slice).toMatchObject({ payload: { v: 2 }, generation: job.generation });
    // Nothing of the first generation was due at the change; its messages, delivered after, created nothing.
    expect(instants(before).every((at) => at >= job.updatedAt)).toBe(true);
    expect(slices.filter((slice) => slice.generation === first.generation)).toEqual([]);
  });

  it('a payload change at the same instants re-creates them with the new payload', async () => {
    await jobs.put(spec('repayload', { payload: { v: 1 } }));
    const first = await scan('repayload');
    const { job } = await jobs.put(spec('repayload', { payload: { v: 2 } }));
    const second = await scan('repayload');
    for (const at of instants(first)) expect(instants(second)).toContain(at);
    // The old messages claimed first: each instant is skipped for them, then re-created and run with the new payload.
    const runs = await deliver([...first, ...second]);
    expect(runs).toEqual(instants(second).map((at) => ({ at, payload: { v: 2 } })));
    for (const slice of await slicesOf('repayload'))
      expect(slice).toMatchObject({ status: SliceStatus.Succeeded, payload: { v: 2 }, generation: job.generation });
  });

  it('storing the definition a job already has changes nothing', async () => {
    const { job } = await jobs.put(spec('same-again', { payload: { a: 1, b: 2 } }));
    const sent = await scan('same-again');
    const again = await jobs.put(spec('same-again', { payload: { b: 2, a: 1 } }));
    expect(again).toMatchObject({ created: false, skipped: 0 });
    expect(again.job.generation).toBe(job.generation);
    // No new generation to take up, and the messages already sent still run.
    expect(await scan('same-again')).toEqual([]);
    expect((await deliver(sent)).map((run) => run.at)).toEqual(instants(sent));
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
    await slices.recordFailure(
      { key: retryKey, fence: 1 },
      { now: Date.now(), error: 'boom', nextAttemptAt: Date.now() + 60_000, sweepAt: Date.now() + 90_000 },
    );

    const { skipped } = await jobs.pause('settle-overdue');
    expect(skipped).toBe(2);
    expect(await slices.get({ jobId: job.id, scheduledAt: overdue })).toMatchObject({ status: 'SKIPPED', skipReason: 'paused' });
    expect(await slices.get(retryKey)).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', fence: 1 });
  });
});
