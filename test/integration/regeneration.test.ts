/**
 * A job changed while its occurrence's slice was claimed under the old
 * generation: that claim skips it (the job moved on); the new generation's
 * message re-creates the instant and runs it. Against the emulator, with the
 * real claim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSleep } from '../../lib/core/clock.ts';
import { definitionOf } from '../../lib/core/job-record.ts';
import { supersededReason } from '../../lib/core/job-lifecycle.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

describe('an instant two generations sent', () => {
  it('the older message skips it, the newer one re-creates and runs it', async () => {
    const { runtime } = installation;
    const jobs = runtime.jobs(['h']);
    const spec = { id: 'regen', schedule: '*/5 * * * * *', handler: 'h' };
    const first = (await jobs.put(spec)).job;
    const at = wholeSecond(60_000);
    const key = { jobId: first.id, scheduledAt: at };
    await jobs.delete(first.id);
    const readded = (await jobs.put(spec)).job;
    expect(readded.generation).toBe(first.generation + 2);

    const old = await runtime.slices.claim(key, 'w1', at, 'm-old', 1, definitionOf(first));
    expect(old.won && old.slice).toMatchObject({ generation: first.generation, fence: 1 });
    const record = await runtime.jobReader.record(first.id);
    expect(old.won && supersededReason(record, old.slice)).toBe('superseded');
    await runtime.slices.skipClaimed({ key, fence: 1 }, 'superseded', at);

    const fresh = await runtime.slices.claim(key, 'w2', at + 100, 'm-new', 1, definitionOf(readded));
    expect(fresh.won && fresh.slice).toMatchObject({
      generation: readded.generation,
      fence: 2,
      attempts: 1,
      status: 'RUNNING',
      claimedFrom: 'ENQUEUED',
    });
    expect(fresh.won && supersededReason(record, fresh.slice)).toBeUndefined();
  });
});

describe('a newer generation meeting an older one mid-claim', () => {
  it('waits for that claim to end (not dropped as a copy), then re-creates the instant and runs it', async () => {
    const { runtime } = installation;
    const jobs = runtime.jobs(['h']);
    const spec = { id: 'regen-race', schedule: '*/5 * * * * *', handler: 'h' };
    const first = (await jobs.put(spec)).job;
    // An occurrence of both generations (every 5 s), close enough for the workers to claim it now.
    const at = Math.ceil((Date.now() + 1000) / 5000) * 5000;
    await realSleep(Math.max(0, at - 1000 - Date.now()));
    const key = { jobId: first.id, scheduledAt: at };
    // The old generation's message is claimed first: its worker holds the slice while it reads the job.
    const old = await runtime.slices.claim(key, 'w-old', Date.now(), 'm-old', 1, definitionOf(first));
    expect(old.won).toBe(true);
    const changed = (await jobs.put({ ...spec, payload: { v: 2 } })).job;

    // The new generation's message, delivered meanwhile (its own SQS message, so another message id).
    await runtime.workQueue.send([{ ...key, delaySeconds: 0, generation: changed.generation }]);
    const [message] = await installation.receiveSome(installation.resources.queueUrls.work, 1);
    const runs: unknown[] = [];
    const worker = runtime.worker('w-new', new HandlerRegistry([defineJob('h', async (ctx) => void runs.push(ctx.payload))]));
    const delivery = { body: message!.Body!, receiptHandle: message!.ReceiptHandle!, messageId: message!.MessageId };
    expect(await worker.process({ ...delivery, receiveCount: 1 })).toBe('keep');
    expect(runs).toEqual([]);

    // The old claim ends as the old worker finds the job moved on; the new message comes back and runs the instant.
    await runtime.slices.skipClaimed({ key, fence: 1 }, 'superseded', Date.now());
    expect(await worker.process({ ...delivery, receiveCount: 2 })).toBe('delete');
    expect(runs).toEqual([{ v: 2 }]);
    expect(await runtime.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', generation: changed.generation, fence: 2, attempts: 1 });
  });
});
