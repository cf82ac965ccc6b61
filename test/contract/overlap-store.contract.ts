/**
 * The OverlapStore contract (core/ports.ts): the overlap policy's lane (read,
 * and taken on the version read), its read of the line, and its two writes of slices, each conditioned on the
 * fence that holds the slice (its skip is SliceStore.skipClaimed, shared with
 * the worker's skip of a superseded run: slice-store.contract.ts). Run
 * against both stores by memory.contract.test.ts and dynamo.contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../lib/core/errors.ts';
import {
  CaseSpace,
  claimed,
  createdByClaim,
  enqueued,
  jobSpec,
  sweepableOf,
  type ContractFactory,
  type ContractInstallation,
} from './contract-fixture.ts';

export function overlapStoreContract(label: string, factory: ContractFactory): void {
  describe(`OverlapStore contract: ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());

    it('lane: absent until taken; each take conditioned on the version read, so of two takes from one read only one lands', async () => {
      const t = space.instant();
      const id = space.jobId('overlap-lane');
      await store.putJob(jobSpec(id));
      expect(await store.overlap.lane(id)).toBeUndefined();
      expect(await store.overlap.takeLane(id, undefined, t, t)).toBe(true);
      expect(await store.overlap.takeLane(id, undefined, t + 1000, t)).toBe(false);
      const first = await store.overlap.lane(id);
      expect(first).toEqual({ runAt: t, version: 1 });
      expect(await store.overlap.takeLane(id, first, t + 2000, t + 2000)).toBe(true);
      expect(await store.overlap.takeLane(id, first, t + 3000, t + 3000)).toBe(false);
      expect(await store.overlap.lane(id)).toEqual({ runAt: t + 2000, version: 2 });
      // Not a slice: no read of the job's slices meets it.
      expect(await store.slices.between(id, 0, Number.MAX_SAFE_INTEGER)).toEqual([]);
    });

    it('firstInLine: the earliest ENQUEUED or RUNNING slice strictly between the bounds, reading at most the limit', async () => {
      const t = space.instant();
      const id = space.jobId('overlap-line');
      const { keys } = await enqueued(store, id, [t, t + 1000, t + 2000, t + 3000, t + 4000], t);
      const [done, failed, , running] = keys;
      const won = async (key: typeof done): Promise<number> => {
        const claim = await store.slices.claim(key!, 'worker-a', t + 100, `message-${key!.scheduledAt}`);
        if (!claim.won) throw new Error('claim lost');
        return claim.slice.fence;
      };
      await store.slices.commit({ key: done!, fence: await won(done), owner: 'worker-a' }, t + 200, []);
      await store.slices.recordFailure(
        { key: failed!, fence: await won(failed) },
        { now: t + 200, error: 'boom', nextAttemptAt: t + 60_000, sweepAt: t + 90_000 },
      );
      await won(running);
      const at = async (after: number, before: number, limit = 10): Promise<number | undefined> =>
        (await store.overlap.firstInLine(id, after, before, limit))?.scheduledAt;
      // SUCCEEDED and FAILED (its turn taken) are not in line; ENQUEUED is.
      expect(await at(t - 1, t + 5000)).toBe(t + 2000);
      // Both bounds exclusive; RUNNING is in line.
      expect(await at(t + 2000, t + 5000)).toBe(t + 3000);
      expect(await at(t - 1, t + 2000)).toBeUndefined();
      // The limit counts the slices read, not those found.
      expect(await at(t - 1, t + 5000, 2)).toBeUndefined();
      expect(await at(t - 1, t + 5000, 3)).toBe(t + 2000);
    });

    it('deferClaimed: back to ENQUEUED with the claim undone and bufferedAt kept from the first wait; claimable again with a higher fence', async () => {
      const t = space.instant();
      const id = space.jobId('overlap-defer');
      const { key, slice } = await claimed(store, id, t);
      await store.overlap.deferClaimed({ key, fence: slice.fence }, t + 100, t + 9000);
      expect(await store.slices.get(key)).toMatchObject({
        status: 'ENQUEUED',
        attempts: 0,
        bufferedAt: t + 100,
        fence: slice.fence,
        owner: undefined,
      });
      expect(await sweepableOf(store, id, t + 9000)).toEqual([{ scheduledAt: t, sweepAt: t + 9000, status: 'ENQUEUED' }]);
      const again = await store.slices.claim(key, 'worker-b', t + 5000, 'message-b');
      expect(again.won && again.slice).toMatchObject({ fence: slice.fence + 1, attempts: 1, owner: 'worker-b' });
      await store.overlap.deferClaimed({ key, fence: slice.fence + 1 }, t + 5100, t + 12_000);
      expect((await store.slices.get(key))?.bufferedAt).toBe(t + 100);
      await expect(store.overlap.deferClaimed({ key, fence: slice.fence + 1 }, t + 5200, t + 12_000)).rejects.toBeInstanceOf(
        LeaseLostError,
      );
    });

    it('deferClaimed puts a slice its claim created (no sweep index entry until then) into the sweep index', async () => {
      const t = space.instant();
      const job = await store.putJob(jobSpec(space.jobId('overlap-defer-created')));
      const { key, slice } = await createdByClaim(store, job, t);
      expect(await sweepableOf(store, job.id, Number.MAX_SAFE_INTEGER)).toEqual([]);
      await store.overlap.deferClaimed({ key, fence: slice.fence }, t + 100, t + 9000);
      expect(await sweepableOf(store, job.id, t + 8999)).toEqual([]);
      expect(await sweepableOf(store, job.id, t + 9000)).toEqual([{ scheduledAt: t, sweepAt: t + 9000, status: 'ENQUEUED' }]);
    });

    it('fenceOut: the run on that fence to SKIPPED "replaced" with fence + 1, so its renewal and commit fail; a run that moved on is left alone', async () => {
      const t = space.instant();
      const id = space.jobId('overlap-replace');
      const { key, slice } = await claimed(store, id, t);
      expect(await store.overlap.fenceOut({ key, fence: slice.fence + 5 }, t + 10)).toBe(false);
      expect(await store.overlap.fenceOut({ key, fence: slice.fence }, t + 10)).toBe(true);
      expect(await store.slices.get(key)).toMatchObject({ status: 'SKIPPED', skipReason: 'replaced', fence: slice.fence + 1 });
      await expect(store.slices.renew({ key, fence: slice.fence }, t + 20, 4000)).rejects.toBeInstanceOf(LeaseLostError);
      await expect(store.slices.commit({ key, fence: slice.fence, owner: 'worker-a' }, t + 30, [])).rejects.toThrow();
      expect(await store.overlap.fenceOut({ key, fence: slice.fence + 1 }, t + 40)).toBe(false);
    });
  });
}
