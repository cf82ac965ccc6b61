/**
 * A job changed while its occurrence's message was on its way: the old
 * generation's message, claimed first, creates the slice and skips it (the
 * job moved on); the new generation's message re-creates the instant and runs
 * it. Against the emulator, with the real claim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definitionOf } from '../../lib/core/ports.ts';
import { supersededReason } from '../../lib/core/job-lifecycle.ts';
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
    await runtime.slices.skipClaimed(key, 1, 'superseded', at);

    const fresh = await runtime.slices.claim(key, 'w2', at + 100, 'm-new', 1, definitionOf(readded));
    expect(fresh.won && fresh.slice).toMatchObject({ generation: readded.generation, fence: 2, attempts: 1, status: 'RUNNING', claimedFrom: 'ENQUEUED' });
    expect(fresh.won && supersededReason(record, fresh.slice)).toBeUndefined();
  });
});
