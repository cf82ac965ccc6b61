/**
 * The ScheduleStore contract (advance: version race, existing instants,
 * generations) and the sweep's half of the SliceStore (findSweepable,
 * findCreatedByScan, deferSweep), plus the settle a job change runs. Run
 * against both stores by memory.contract.test.ts and dynamo.contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSlice } from '../../lib/core/ports.ts';
import { CaseSpace, claimed, enqueued, FAST_POLICIES, sweepableOf, type ContractFactory, type ContractInstallation } from './contract-fixture.ts';

export function scheduleStoreContract(label: string, factory: ContractFactory): void {
  describe(`ScheduleStore and sweep contract: ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());
    const spec = (id: string, payload?: Record<string, unknown>) => ({ id, schedule: '* * * * * *', handler: 'h', payload, policies: FAST_POLICIES });
    const at = (jobId: string, scheduledAt: number): NewSlice => ({ jobId, scheduledAt, sweepAt: scheduledAt + 30_000 });

    describe('advance', () => {
      it('two scanners advancing one job from the same read: one creates the slices, the other is a conflict; a stale read creates nothing', async () => {
        const t = space.instant();
        const id = space.jobId('advance-race');
        const job = await store.putJob(spec(id));
        const window = [at(id, t), at(id, t + 1000), at(id, t + 2000)];
        const outcomes = await Promise.all([store.schedules.advance(job, window, t + 3000, t), store.schedules.advance(job, window, t + 3000, t)]);
        expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['advanced', 'conflict']);
        const winner = outcomes.find((outcome) => outcome.kind === 'advanced');
        expect(winner?.kind === 'advanced' && winner.created.map((key) => key.scheduledAt)).toEqual([t, t + 1000, t + 2000]);
        expect(await store.dueJob(id)).toMatchObject({ nextFireAt: t + 3000, version: job.version + 1 });
        const stale = await store.schedules.advance(job, [at(id, t + 3000)], t + 4000, t);
        expect(stale).toEqual({ kind: 'conflict', alreadyCreated: [] });
        expect(await store.slices.get({ jobId: id, scheduledAt: t + 3000 })).toBeUndefined();
        expect(await store.dueJob(id)).toMatchObject({ nextFireAt: t + 3000, version: job.version + 1 });
      });

      it('records a missed range as one MISSED item at its first occurrence, in the same transaction; a conflict records none', async () => {
        const t = space.instant();
        const id = space.jobId('advance-missed');
        const job = await store.putJob(spec(id));
        const missed = { from: t - 600_000, to: t - 60_000, count: 540 };
        const stale = { ...job, version: job.version + 7 };
        expect(await store.schedules.advance(stale, [at(id, t)], t + 1000, t, missed)).toEqual({ kind: 'conflict', alreadyCreated: [] });
        expect(await store.slices.get({ jobId: id, scheduledAt: missed.from })).toBeUndefined();
        const outcome = await store.schedules.advance(job, [at(id, t)], t + 1000, t, missed);
        expect(outcome).toEqual({ kind: 'advanced', created: [{ jobId: id, scheduledAt: t }] });
        expect(await store.slices.get({ jobId: id, scheduledAt: missed.from })).toMatchObject({
          status: 'MISSED',
          missedUntil: missed.to,
          missedCount: 540,
          generation: job.generation,
          finishedAt: t,
          fence: 0,
        });
        expect(await store.dueJob(id)).toMatchObject({ nextFireAt: t + 1000, version: job.version + 1 });
      });

      it('a missed range whose first instant an older generation ran leaves that slice as it is and still advances', async () => {
        const t = space.instant();
        const id = space.jobId('advance-missed-run');
        const { keys } = await enqueued(store, id, [t - 600_000], t - 700_000);
        expect((await store.slices.claim(keys[0]!, 'worker-a', t - 600_000, 'message-a')).won).toBe(true);
        const job = (await store.dueJob(id))!;
        const outcome = await store.schedules.advance(job, [at(id, t)], t + 1000, t, { from: t - 600_000, to: t - 60_000, count: 540 });
        expect(outcome).toEqual({ kind: 'advanced', created: [{ jobId: id, scheduledAt: t }] });
        expect(await store.slices.get(keys[0]!)).toMatchObject({ status: 'RUNNING', owner: 'worker-a' });
      });

      it('instants that already exist are left as they are; the rest are created and the job moves on', async () => {
        const t = space.instant();
        const id = space.jobId('advance-existing');
        const { keys } = await enqueued(store, id, [t, t + 2000], t - 5000);
        expect((await store.slices.claim(keys[0]!, 'worker-a', t, 'message-a')).won).toBe(true);
        const job = (await store.dueJob(id))!;
        const outcome = await store.schedules.advance(job, [at(id, t), at(id, t + 1000), at(id, t + 2000), at(id, t + 3000)], t + 4000, t + 10);
        expect(outcome).toEqual({ kind: 'advanced', created: [{ jobId: id, scheduledAt: t + 1000 }, { jobId: id, scheduledAt: t + 3000 }] });
        expect(await store.slices.get(keys[0]!)).toMatchObject({ status: 'RUNNING', fence: 1, owner: 'worker-a', createdAt: t - 5000 });
        expect(await store.slices.get(keys[1]!)).toMatchObject({ status: 'ENQUEUED', createdAt: t - 5000 });
        expect(await store.slices.get({ jobId: id, scheduledAt: t + 1000 })).toMatchObject({ status: 'ENQUEUED', fence: 0, attempts: 0, createdAt: t + 10 });
        expect(await store.dueJob(id)).toMatchObject({ nextFireAt: t + 4000, version: job.version + 1 });
      });

      it('a paused job is not advanced, from a read before the pause or after it', async () => {
        const t = space.instant();
        const id = space.jobId('advance-paused');
        const job = await store.putJob(spec(id));
        const paused = await store.pauseJob(id);
        expect(await store.schedules.advance(job, [at(id, t)], t + 1000, t)).toEqual({ kind: 'conflict', alreadyCreated: [] });
        // Even with the version it has now: a job out of the due index is not advanced.
        expect(await store.schedules.advance(paused, [at(id, t)], t + 1000, t)).toEqual({ kind: 'conflict', alreadyCreated: [] });
        expect(await store.slices.get({ jobId: id, scheduledAt: t })).toBeUndefined();
        expect(await store.dueJob(id)).toBeUndefined();
      });

      it("a new generation settles the old one's pending slices and may re-create its SKIPPED and never-run instants, never a run one", async () => {
        const t = space.instant();
        const id = space.jobId('generations');
        const instants = [t, t + 1000, t + 2000, t + 3000];
        const { job: first, keys } = await enqueued(store, id, instants, t - 60_000);
        const [pending, succeeded, failed, running] = keys as [typeof keys[0], typeof keys[0], typeof keys[0], typeof keys[0]];
        for (const key of [succeeded, failed, running]) expect((await store.slices.claim(key, 'worker-a', t, `m-${key.scheduledAt}`)).won).toBe(true);
        await store.slices.commit(succeeded, 1, 'worker-a', t + 10, []);
        await store.slices.recordFailure(failed, 1, { now: t + 10, error: 'boom', nextAttemptAt: t + 5000, sweepAt: t + 35_000 });

        const second = await store.putJob(spec(id, { v: 2 }));
        expect(second.generation).toBe(first.generation + 1);
        expect(await store.slices.get(pending)).toMatchObject({ status: 'SKIPPED', skipReason: 'superseded', generation: first.generation });
        expect(await store.slices.get(failed)).toMatchObject({ status: 'SKIPPED', skipReason: 'superseded', fence: 1 });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING', owner: 'worker-a' });
        expect(await sweepableOf(store, id, t + 86_400_000)).toEqual([expect.objectContaining({ scheduledAt: t + 3000, status: 'RUNNING' })]);

        const outcome = await store.schedules.advance(second, instants.map((instant) => at(id, instant)), t + 4000, t + 20);
        expect(outcome.kind === 'advanced' && outcome.created.map((key) => key.scheduledAt)).toEqual([t, t + 2000]);
        const recreated = await store.slices.get(failed);
        expect(recreated).toMatchObject({ status: 'ENQUEUED', generation: second.generation, fence: 1, attempts: 0, payload: { v: 2 }, createdAt: t + 20 });
        for (const gone of ['owner', 'skipReason', 'lastError', 'nextAttemptAt', 'leaseExpiresAt', 'finishedAt', 'startedAt'] as const) {
          expect(recreated?.[gone], gone).toBeUndefined();
        }
        expect(await store.slices.get(pending)).toMatchObject({ status: 'ENQUEUED', generation: second.generation, fence: 0 });
        expect(await store.slices.get(succeeded)).toMatchObject({ status: 'SUCCEEDED', generation: first.generation });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING', generation: first.generation });

        // The same generation never re-creates its own instant.
        const again = (await store.dueJob(id))!;
        const repeat = await store.schedules.advance(again, [at(id, t)], t + 5000, t + 30);
        expect(repeat).toEqual({ kind: 'advanced', created: [] });
        expect(await store.slices.get(pending)).toMatchObject({ createdAt: t + 20 });
        // Putting the same definition again settles again (a crash may have cut the first settle short), never the current generation's.
        expect((await store.putJob(spec(id, { v: 2 }))).generation).toBe(second.generation);
        expect(await store.slices.get(pending)).toMatchObject({ status: 'ENQUEUED', generation: second.generation });
      });
    });

    describe('sweep', () => {
      it('finds live slices of the shard whose sweep time is at or before now, and no final one', async () => {
        const t = space.instant();
        const id = space.jobId('sweepable');
        const { keys } = await enqueued(store, id, [t, t + 1000, t + 2000], t - 1000, { sweepAt: (instant) => instant + 10_000 });
        await store.slices.claim(keys[2]!, 'worker-a', t, 'message-a');
        await store.slices.commit(keys[2]!, 1, 'worker-a', t + 1, []);
        expect(await sweepableOf(store, id, t + 9999)).toEqual([]);
        expect(await sweepableOf(store, id, t + 10_000)).toEqual([{ scheduledAt: t, sweepAt: t + 10_000, status: 'ENQUEUED' }]);
        expect((await sweepableOf(store, id, t + 86_400_000)).map((found) => found.scheduledAt)).toEqual([t, t + 1000]);
        expect((await store.slices.findSweepable(store.shard + 1, t + 86_400_000, 100)).filter((found) => found.jobId === id)).toEqual([]);
      });

      it('a deferral moves the sweep time it read, and not one a failure set since, nor a final slice back into the index', async () => {
        const t = space.instant();
        const id = space.jobId('defer');
        const { keys } = await enqueued(store, id, [t, t + 1000, t + 2000], t - 1000, { sweepAt: (instant) => instant + 5000 });
        const [read0, read1, read2] = (await sweepableOf(store, id, t + 86_400_000)).map((found) => ({ jobId: id, ...found })) as [
          { jobId: string; scheduledAt: number; sweepAt: number; status: 'ENQUEUED' },
          { jobId: string; scheduledAt: number; sweepAt: number; status: 'ENQUEUED' },
          { jobId: string; scheduledAt: number; sweepAt: number; status: 'ENQUEUED' },
        ];
        await store.slices.deferSweep(read0, t + 50_000);
        await store.slices.claim(keys[1]!, 'worker-a', t + 2000, 'message-a');
        await store.slices.recordFailure(keys[1]!, 1, { now: t + 2100, error: 'boom', nextAttemptAt: t + 3000, sweepAt: t + 33_000 });
        await store.slices.deferSweep(read1, t + 50_000);
        await store.slices.claim(keys[2]!, 'worker-a', t + 2000, 'message-b');
        await store.slices.commit(keys[2]!, 1, 'worker-a', t + 2001, []);
        await store.slices.deferSweep(read2, t + 50_000);
        expect(await sweepableOf(store, id, t + 86_400_000)).toEqual([
          { scheduledAt: t, sweepAt: t + 50_000, status: 'ENQUEUED' },
          { scheduledAt: t + 1000, sweepAt: t + 33_000, status: 'FAILED' },
        ]);
      });

      it('an advance sent again after its first try landed unanswered conflicts and names the slices that try created', async () => {
        const t = space.instant();
        const id = space.jobId('unanswered');
        const { job } = await enqueued(store, id, [t, t + 1000], t - 1000, { scanId: 'scan-first' });
        const again = (scanId: string) => [t, t + 1000].map((scheduledAt) => ({ jobId: id, scheduledAt, scanId, sweepAt: scheduledAt + 30_000 }));
        // The same transaction again (the SDK's retry after a timeout): the same job version read, the same scan id.
        expect(await store.schedules.advance(job, again('scan-first'), t + 2000, t - 900)).toEqual({
          kind: 'conflict',
          alreadyCreated: [{ jobId: id, scheduledAt: t }, { jobId: id, scheduledAt: t + 1000 }],
        });
        // Another scan that read the same version lost a race: the winner sent its slices.
        expect(await store.schedules.advance(job, again('scan-other'), t + 2000, t - 900)).toEqual({ kind: 'conflict', alreadyCreated: [] });
        // A claimed one has its message.
        await store.slices.claim({ jobId: id, scheduledAt: t }, 'worker-a', t, 'm-1');
        expect(await store.schedules.advance(job, again('scan-first'), t + 2000, t - 900)).toEqual({ kind: 'conflict', alreadyCreated: [{ jobId: id, scheduledAt: t + 1000 }] });
      });

      it('finds the slices one scan created with sweep times in [from, to)', async () => {
        const t = space.instant();
        const id = space.jobId('by-scan');
        await enqueued(store, id, [t, t + 1000, t + 2000], t, { scanId: 'scan-1', sweepAt: (instant) => instant });
        const other = space.jobId('by-other-scan');
        await enqueued(store, other, [t + 1000], t, { scanId: 'scan-2', sweepAt: (instant) => instant });
        const found = await store.slices.findCreatedByScan(store.shard, 'scan-1', t, t + 2000, 100);
        expect(found.filter((candidate) => candidate.jobId === id || candidate.jobId === other).map((candidate) => candidate.scheduledAt).sort()).toEqual([t, t + 1000]);
      });

      it('a pause settles pending slices as paused, and they leave the sweep index; a claimed one runs on', async () => {
        const t = space.instant();
        const id = space.jobId('pause-settle');
        const { key: running } = await claimed(store, id, t);
        const job = (await store.dueJob(id))!;
        await store.schedules.advance(job, [at(id, t + 1000)], t + 2000, t);
        await store.pauseJob(id);
        expect(await store.slices.get({ jobId: id, scheduledAt: t + 1000 })).toMatchObject({ status: 'SKIPPED', skipReason: 'paused', finishedAt: expect.any(Number) });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING' });
        expect((await sweepableOf(store, id, t + 86_400_000)).map((found) => found.scheduledAt)).toEqual([t]);
      });
    });
  });
}
