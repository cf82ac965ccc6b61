/**
 * The SliceStore's writes outside a run, and what a job change does to
 * slices: the slices written before any claim (enqueue: the reconciler's and
 * an operator's; recordRange: a scan's MISSED and misfire records;
 * settleAbsent: a change's record of the ended generation's due occurrences),
 * the reconciler's read and follow (between, followAbandoned), the sweep
 * (findSweepable, deferSweep), and the settle a job change runs. Each
 * creating write succeeds only where there is no slice or an older
 * generation's unrun one (`mayCreateSlice`, create-slices.ts), keeping the
 * fence. Run against both stores by memory.contract.test.ts and
 * dynamo.contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSlice } from '../../lib/core/ports.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import type { SliceDefinition, SliceKey } from '../../lib/core/slice.ts';
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

/** What a run (or a settle) leaves on an instant that a slice created over it must not carry. */
const LAST_RUN_FIELDS = [
  'owner',
  'leaseExpiresAt',
  'leaseMessageId',
  'leaseReceiveCount',
  'claimedFrom',
  'startedAt',
  'finishedAt',
  'lastError',
  'nextAttemptAt',
  'skipReason',
  'bufferedAt',
  'missedUntil',
  'missedCount',
] as const;

export function sliceLifecycleContract(label: string, factory: ContractFactory): void {
  describe(`Slice lifecycle contract (writes before a claim, reconcile, sweep, job changes): ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());
    const at = (jobId: string, scheduledAt: number, sweepAt = scheduledAt + 30_000): NewSlice => ({ jobId, scheduledAt, sweepAt });
    /** A job and the definitions of its generation and of the one after it (a change the store need not know of). */
    async function generations(
      name: string,
      payload?: Record<string, unknown>,
    ): Promise<{ job: StoredJob; id: string; older: SliceDefinition; newer: SliceDefinition }> {
      const job = await store.putJob(jobSpec(space.jobId(name), payload));
      const older = definitionOf(job);
      return {
        job,
        id: job.id,
        older,
        newer: { ...older, generation: older.generation + 1, payload: { generation: older.generation + 1 } },
      };
    }
    /** A slice of `run`'s generation at `key` that ran and failed: FAILED on fence 1 with its error, retry and last lease. */
    async function failedRun(key: SliceKey, run: SliceDefinition, now: number): Promise<void> {
      const claim = await store.slices.claim(key, 'worker-a', now, 'message-a', 3, run);
      if (!claim.won) throw new Error(`claim lost: ${JSON.stringify(claim)}`);
      await store.slices.recordFailure(
        { key, fence: 1 },
        { now: now + 10, error: 'boom', nextAttemptAt: now + 1000, sweepAt: now + 31_000 },
      );
    }
    /** A slice of `run`'s generation at `key` that ran to SUCCEEDED on fence 1. */
    async function succeededRun(key: SliceKey, run: SliceDefinition, now: number): Promise<void> {
      const claim = await store.slices.claim(key, 'worker-a', now, 'message-a', 1, run);
      if (!claim.won) throw new Error(`claim lost: ${JSON.stringify(claim)}`);
      await store.slices.commit({ key, fence: 1, owner: 'worker-a' }, now + 10, []);
    }

    describe('enqueue', () => {
      it('creates ENQUEUED slices of the generation, each in the sweep index from its own sweep time, and returns their keys', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('enqueue'), { v: 1 }));
        const created = await store.slices.enqueue(
          definitionOf(job),
          [at(job.id, t, t + 10_000), at(job.id, t + 1000, t + 20_000)],
          t - 500,
        );
        expect(created).toEqual([
          { jobId: job.id, scheduledAt: t },
          { jobId: job.id, scheduledAt: t + 1000 },
        ]);
        const stored = await store.slices.get({ jobId: job.id, scheduledAt: t });
        expect(stored).toMatchObject({
          status: 'ENQUEUED',
          fence: 0,
          attempts: 0,
          generation: job.generation,
          handler: 'h',
          policies: job.policies,
          payload: { v: 1 },
          shard: job.shard,
          createdAt: t - 500,
          sweepAt: t + 10_000,
        });
        for (const gone of LAST_RUN_FIELDS) expect(stored?.[gone], gone).toBeUndefined();
        expect(await sweepableOf(store, job.id, t + 9999)).toEqual([]);
        expect(await sweepableOf(store, job.id, t + 10_000)).toEqual([{ scheduledAt: t, sweepAt: t + 10_000, status: 'ENQUEUED' }]);
        expect((await sweepableOf(store, job.id, t + 20_000)).map((found) => found.scheduledAt)).toEqual([t, t + 1000]);
      });

      it("leaves an existing slice alone: its own generation's, and an older generation's run or range record; returns only what it created", async () => {
        const t = space.instant();
        const { job, id, older, newer } = await generations('enqueue-existing');
        const key = (offset: number) => ({ jobId: id, scheduledAt: t + offset });
        await store.slices.enqueue(newer, [at(id, t)], t - 1000);
        await createdByClaim(store, job, t + 1000);
        await succeededRun(key(2000), older, t);
        await store.slices.recordRange(id, older, { from: t + 3000, to: t + 5000, count: 2 }, t);

        const created = await store.slices.enqueue(
          newer,
          [0, 1000, 2000, 3000, 6000].map((offset) => at(id, t + offset)),
          t + 100,
        );
        expect(created).toEqual([key(6000)]);
        expect(await store.slices.get(key(0))).toMatchObject({ status: 'ENQUEUED', generation: newer.generation, createdAt: t - 1000 });
        expect(await store.slices.get(key(1000))).toMatchObject({ status: 'RUNNING', generation: older.generation, fence: 1 });
        expect(await store.slices.get(key(2000))).toMatchObject({ status: 'SUCCEEDED', generation: older.generation });
        expect(await store.slices.get(key(3000))).toMatchObject({ status: 'MISSED', generation: older.generation, missedUntil: t + 5000 });
        expect(await store.slices.get(key(6000))).toMatchObject({ status: 'ENQUEUED', generation: newer.generation, createdAt: t + 100 });
      });

      it("creates over an older generation's unrun slice (ENQUEUED, FAILED, SKIPPED), keeping its fence; nothing of the last run stays", async () => {
        const t = space.instant();
        const { id, older, newer } = await generations('enqueue-over', { generation: 'older' });
        const key = (offset: number) => ({ jobId: id, scheduledAt: t + offset });
        await store.slices.enqueue(older, [at(id, t)], t - 1000);
        await failedRun(key(1000), older, t);
        const skipped = await store.slices.claim(key(2000), 'worker-a', t, 'message-s', 2, older);
        expect(skipped.won).toBe(true);
        await store.slices.skipClaimed({ key: key(2000), fence: 1 }, 'overlap', t + 10);
        await store.slices.recordRange(id, older, { from: t + 3000, to: t + 9000, count: 6, reason: 'misfire' }, t);

        const created = await store.slices.enqueue(
          newer,
          [0, 1000, 2000, 3000].map((offset) => at(id, t + offset, t + 50_000)),
          t + 100,
        );
        expect(created).toEqual([key(0), key(1000), key(2000), key(3000)]);
        for (const [offset, fence] of [
          [0, 0],
          [1000, 1],
          [2000, 1],
          [3000, 0],
        ] as const) {
          const stored = await store.slices.get(key(offset));
          expect(stored, `+${offset}`).toMatchObject({
            status: 'ENQUEUED',
            generation: newer.generation,
            fence,
            attempts: 0,
            payload: newer.payload,
            createdAt: t + 100,
            sweepAt: t + 50_000,
          });
          for (const gone of LAST_RUN_FIELDS) expect(stored?.[gone], `+${offset} ${gone}`).toBeUndefined();
        }
        // Claimed again, the fence moves past every older claim's.
        const claim = await store.slices.claim(key(1000), 'worker-b', t + 200, 'message-b');
        expect(claim.won && claim.slice).toMatchObject({ fence: 2, attempts: 1, claimedFrom: 'ENQUEUED', generation: newer.generation });
      });

      it('two racing enqueues of one instant (two reconcilers): one creates it', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('enqueue-race')));
        const outcomes = await Promise.all([
          store.slices.enqueue(definitionOf(job), [at(job.id, t, t + 10_000)], t - 100),
          store.slices.enqueue(definitionOf(job), [at(job.id, t, t + 20_000)], t - 200),
        ]);
        expect(outcomes.flat()).toEqual([{ jobId: job.id, scheduledAt: t }]);
        const winner =
          outcomes[0]!.length === 1 ? { createdAt: t - 100, sweepAt: t + 10_000 } : { createdAt: t - 200, sweepAt: t + 20_000 };
        expect(await store.slices.get({ jobId: job.id, scheduledAt: t })).toMatchObject({ status: 'ENQUEUED', fence: 0, ...winner });
      });
    });

    describe('recordRange', () => {
      it('records a missed range as one final MISSED item at its first occurrence, out of the sweep index, without the payload', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('range-missed'), { v: 1 }));
        const missed = { from: t - 600_000, to: t - 60_000, count: 540 };
        expect(await store.slices.recordRange(job.id, definitionOf(job), missed, t)).toEqual({ outcome: 'written' });
        const stored = await store.slices.get({ jobId: job.id, scheduledAt: missed.from });
        expect(stored).toMatchObject({
          status: 'MISSED',
          missedUntil: missed.to,
          missedCount: 540,
          generation: job.generation,
          handler: 'h',
          shard: job.shard,
          finishedAt: t,
          createdAt: t,
          fence: 0,
          attempts: 0,
        });
        for (const gone of ['payload', 'skipReason', 'sweepAt', 'owner'] as const) expect(stored?.[gone], gone).toBeUndefined();
        expect(await store.slices.get({ jobId: job.id, scheduledAt: missed.from + 1000 })).toBeUndefined();
        expect(await sweepableOf(store, job.id, Number.MAX_SAFE_INTEGER)).toEqual([]);
        // The same range recorded again (a redone scan, or a racing one whose clock ended it sooner) changes nothing,
        // and says this generation's record is there, with the end it records.
        expect(
          await store.slices.recordRange(job.id, definitionOf(job), { ...missed, to: missed.to - 2000, count: 538 }, t + 5000),
        ).toEqual({ outcome: 'recorded', until: missed.to });
        expect(await store.slices.get({ jobId: job.id, scheduledAt: missed.from })).toMatchObject({ finishedAt: t, missedCount: 540 });
      });

      it('records the occurrences the misfire policy does not run as one SKIPPED range item with reason misfire', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('range-misfire')));
        await store.slices.recordRange(job.id, definitionOf(job), { from: t - 30_000, to: t - 1000, count: 29, reason: 'misfire' }, t);
        expect(await store.slices.get({ jobId: job.id, scheduledAt: t - 30_000 })).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'misfire',
          missedUntil: t - 1000,
          missedCount: 29,
          generation: job.generation,
          finishedAt: t,
          fence: 0,
        });
        expect(await sweepableOf(store, job.id, Number.MAX_SAFE_INTEGER)).toEqual([]);
      });

      it("is not written over a slice an older generation ran, nor over this generation's own; over an older one's unrun slice it is, keeping the fence", async () => {
        const t = space.instant();
        const { job, id, older, newer } = await generations('range-over');
        const key = (offset: number) => ({ jobId: id, scheduledAt: t + offset });
        const range = (from: number) => ({ from, to: from + 500, count: 1 });
        await createdByClaim(store, job, t);
        await succeededRun(key(1000), older, t);
        await store.slices.enqueue(newer, [at(id, t + 2000)], t);
        await failedRun(key(3000), older, t);

        const outcomes = [];
        for (const offset of [0, 1000, 2000, 3000]) outcomes.push(await store.slices.recordRange(id, newer, range(t + offset), t + 5000));
        // Another slice keeps the instant (a run, this generation's ENQUEUED one): not a record of this range, so the scan still reports it.
        expect(outcomes.map(({ outcome }) => outcome)).toEqual(['kept', 'kept', 'kept', 'written']);
        expect(await store.slices.get(key(0))).toMatchObject({ status: 'RUNNING', owner: 'worker-a', generation: older.generation });
        expect(await store.slices.get(key(1000))).toMatchObject({ status: 'SUCCEEDED', generation: older.generation });
        expect(await store.slices.get(key(2000))).toMatchObject({ status: 'ENQUEUED', generation: newer.generation });
        const overFailed = await store.slices.get(key(3000));
        expect(overFailed).toMatchObject({
          status: 'MISSED',
          generation: newer.generation,
          fence: 1,
          missedUntil: t + 3500,
          finishedAt: t + 5000,
        });
        for (const gone of ['owner', 'lastError', 'nextAttemptAt', 'leaseMessageId', 'leaseReceiveCount', 'sweepAt'] as const)
          expect(overFailed?.[gone], gone).toBeUndefined();
      });
    });

    describe('settleAbsent', () => {
      it("writes SKIPPED with the change's reason only where there is no slice or an older generation's unrun one, and counts them", async () => {
        const t = space.instant();
        const { job, id, older: ancient, newer: ended } = await generations('settle-absent');
        const key = (offset: number) => ({ jobId: id, scheduledAt: t + offset });
        await store.slices.enqueue(ancient, [at(id, t + 1000)], t - 5000);
        await createdByClaim(store, job, t + 2000);
        await store.slices.enqueue(ended, [at(id, t + 3000)], t - 5000);
        await succeededRun(key(4000), ancient, t);
        // A claim that created its slice first wins over the settle.
        expect((await store.slices.claim(key(5000), 'worker-b', t, 'message-b', 1, ended)).won).toBe(true);

        const instants = [0, 1000, 2000, 3000, 4000, 5000].map((offset) => t + offset);
        expect(await store.slices.settleAbsent(id, ended, instants, 'deleted', t + 100)).toBe(2);
        const none = await store.slices.get(key(0));
        expect(none).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'deleted',
          generation: ended.generation,
          fence: 0,
          attempts: 0,
          finishedAt: t + 100,
          createdAt: t + 100,
        });
        expect(none?.sweepAt).toBeUndefined();
        const overPending = await store.slices.get(key(1000));
        expect(overPending).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'deleted',
          generation: ended.generation,
          fence: 0,
          finishedAt: t + 100,
        });
        expect(overPending?.sweepAt).toBeUndefined();
        expect(await store.slices.get(key(2000))).toMatchObject({ status: 'RUNNING', generation: ancient.generation });
        expect(await store.slices.get(key(3000))).toMatchObject({ status: 'ENQUEUED', generation: ended.generation });
        expect(await store.slices.get(key(4000))).toMatchObject({ status: 'SUCCEEDED', generation: ancient.generation });
        expect(await store.slices.get(key(5000))).toMatchObject({ status: 'RUNNING', owner: 'worker-b', generation: ended.generation });
        // The settled one left the sweep index; the ended generation's own pending one is the lifecycle settle's to skip.
        expect((await sweepableOf(store, id, Number.MAX_SAFE_INTEGER)).map((found) => found.scheduledAt)).toEqual([t + 3000]);

        // Settled first: the ended generation's message that arrives later does not run it.
        expect(await store.slices.claim(key(0), 'worker-c', t + 200, 'message-c', 1, ended)).toMatchObject({
          won: false,
          current: { status: 'SKIPPED' },
        });
        expect(await store.slices.settleAbsent(id, ended, instants, 'deleted', t + 300)).toBe(0);
        expect(await store.slices.get(key(0))).toMatchObject({ finishedAt: t + 100 });
      });
    });

    describe('reconciler: between and followAbandoned', () => {
      it("between: the job's slices scheduled in [from, to), oldest first, range records included; no other job's", async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('between')));
        const run = definitionOf(job);
        await store.slices.recordRange(job.id, run, { from: t - 60_000, to: t - 10_000, count: 50 }, t);
        await store.slices.settleAbsent(job.id, run, [t + 2000], 'superseded', t);
        await createdByClaim(store, job, t + 1000);
        await store.slices.enqueue(run, [at(job.id, t)], t);
        const other = await store.putJob(jobSpec(space.jobId('between-other')));
        await store.slices.enqueue(definitionOf(other), [at(other.id, t + 1000)], t);

        const found = await store.slices.between(job.id, t, t + 2000);
        expect(found.map((slice) => [slice.scheduledAt, slice.status])).toEqual([
          [t, 'ENQUEUED'],
          [t + 1000, 'RUNNING'],
        ]);
        expect(found[1]).toEqual(await store.slices.get({ jobId: job.id, scheduledAt: t + 1000 }));
        expect((await store.slices.between(job.id, t - 60_000, t + 2001)).map((slice) => slice.scheduledAt)).toEqual([
          t - 60_000,
          t,
          t + 1000,
          t + 2000,
        ]);
        expect(await store.slices.between(job.id, t + 1, t + 1000)).toEqual([]);
        expect(await store.slices.between(job.id, t, t)).toEqual([]);
        expect(await store.slices.between(job.id, t + 3000, t + 86_400_000)).toEqual([]);
        expect((await store.slices.between(other.id, t - 60_000, t + 86_400_000)).map((slice) => slice.scheduledAt)).toEqual([t + 1000]);
      });

      it('followAbandoned: only a RUNNING slice on that fence and out of the sweep index enters it; then the sweep finds it', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('follow')));
        const { key } = await createdByClaim(store, job, t, 'worker-a', 'message-a');
        expect(await store.slices.followAbandoned({ key, fence: 2 }, t + 50_000)).toBe(false);
        expect(await store.slices.followAbandoned({ key, fence: 0 }, t + 50_000)).toBe(false);
        expect(await sweepableOf(store, job.id, Number.MAX_SAFE_INTEGER)).toEqual([]);
        expect(await store.slices.followAbandoned({ key, fence: 1 }, t + 50_000)).toBe(true);
        expect(await store.slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 1, owner: 'worker-a', sweepAt: t + 50_000 });
        expect(await sweepableOf(store, job.id, t + 49_999)).toEqual([]);
        expect(await sweepableOf(store, job.id, t + 50_000)).toEqual([{ scheduledAt: t, sweepAt: t + 50_000, status: 'RUNNING' }]);
        // Already followed: a second reconciler leaves its sweep time alone.
        expect(await store.slices.followAbandoned({ key, fence: 1 }, t + 90_000)).toBe(false);
        expect((await store.slices.get(key))?.sweepAt).toBe(t + 50_000);
      });

      it('followAbandoned leaves alone a slice that is not RUNNING, one already in the sweep index, one taken over since, and a missing one', async () => {
        const t = space.instant();
        const { job, keys } = await enqueued(store, space.jobId('follow-not'), [t], t - 1000, { sweepAt: () => t + 30_000 });
        expect(await store.slices.followAbandoned({ key: keys[0]!, fence: 0 }, t + 50_000)).toBe(false);
        // Claimed from the sweep index: its sweep time stays, and the sweep already follows it.
        expect((await store.slices.claim(keys[0]!, 'worker-a', t, 'message-a')).won).toBe(true);
        expect(await store.slices.followAbandoned({ key: keys[0]!, fence: 1 }, t + 50_000)).toBe(false);
        expect((await store.slices.get(keys[0]!))?.sweepAt).toBe(t + 30_000);

        const { key: failed } = await createdByClaim(store, job, t + 1000, 'worker-a', 'message-f');
        await store.slices.recordFailure(
          { key: failed, fence: 1 },
          { now: t + 1100, error: 'boom', nextAttemptAt: t + 2000, sweepAt: t + 32_000 },
        );
        expect(await store.slices.followAbandoned({ key: failed, fence: 1 }, t + 50_000)).toBe(false);
        expect((await store.slices.get(failed))?.sweepAt).toBe(t + 32_000);

        const { key: takenOver } = await createdByClaim(store, job, t + 2000, 'worker-a', 'message-t');
        expect((await store.slices.claim(takenOver, 'worker-b', t + 2001, 'message-t', 2)).won).toBe(true);
        expect(await store.slices.followAbandoned({ key: takenOver, fence: 1 }, t + 50_000)).toBe(false);
        expect((await store.slices.get(takenOver))?.sweepAt).toBeUndefined();

        const missing = { jobId: job.id, scheduledAt: t + 3000 };
        expect(await store.slices.followAbandoned({ key: missing, fence: 0 }, t + 50_000)).toBe(false);
        expect(await store.slices.get(missing)).toBeUndefined();
      });
    });

    describe('sweep', () => {
      it('finds live slices of the shard whose sweep time is at or before now; no final one, nor one its claim created', async () => {
        const t = space.instant();
        const id = space.jobId('sweepable');
        const { job, keys } = await enqueued(store, id, [t, t + 1000, t + 2000], t - 1000, { sweepAt: (instant) => instant + 10_000 });
        await store.slices.claim(keys[2]!, 'worker-a', t, 'message-a');
        await store.slices.commit({ key: keys[2]!, fence: 1, owner: 'worker-a' }, t + 1, []);
        await createdByClaim(store, job, t + 3000);
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
        await store.slices.recordFailure(
          { key: keys[1]!, fence: 1 },
          { now: t + 2100, error: 'boom', nextAttemptAt: t + 3000, sweepAt: t + 33_000 },
        );
        await store.slices.deferSweep(read1, t + 50_000);
        await store.slices.claim(keys[2]!, 'worker-a', t + 2000, 'message-b');
        await store.slices.commit({ key: keys[2]!, fence: 1, owner: 'worker-a' }, t + 2001, []);
        await store.slices.deferSweep(read2, t + 50_000);
        expect(await sweepableOf(store, id, t + 86_400_000)).toEqual([
          { scheduledAt: t, sweepAt: t + 50_000, status: 'ENQUEUED' },
          { scheduledAt: t + 1000, sweepAt: t + 33_000, status: 'FAILED' },
        ]);
        expect((await store.slices.get(keys[2]!))?.sweepAt).toBeUndefined();
      });
    });

    describe('job changes', () => {
      it('a pause settles pending slices as paused, and they leave the sweep index; a claimed one runs on', async () => {
        const t = space.instant();
        const id = space.jobId('pause-settle');
        const { key: running } = await claimed(store, id, t);
        const job = (await store.storedJob(id))!;
        const pending = { jobId: id, scheduledAt: t + 1000 };
        expect(await store.slices.enqueue(definitionOf(job), [at(id, t + 1000)], t)).toEqual([pending]);
        const paused = await store.pauseJob(id);
        expect(paused).toMatchObject({ enabled: false, generation: job.generation + 1 });
        expect(await store.storedJob(id)).toMatchObject({ enabled: false, generation: job.generation + 1 });
        expect(await store.slices.get(pending)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'paused',
          generation: job.generation,
          finishedAt: expect.any(Number),
        });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING', generation: job.generation });
        expect((await sweepableOf(store, id, t + 86_400_000)).map((found) => found.scheduledAt)).toEqual([t]);
      });

      it("a new definition settles the old generation's pending slices; the new generation's messages re-create them, never a run one", async () => {
        const t = space.instant();
        const id = space.jobId('generations');
        const { job: first, keys } = await enqueued(store, id, [t, t + 1000, t + 2000, t + 3000], t - 60_000);
        const [pending, succeeded, failed, running] = keys as [SliceKey, SliceKey, SliceKey, SliceKey];
        for (const key of [succeeded, failed, running])
          expect((await store.slices.claim(key, 'worker-a', t, `m-${key.scheduledAt}`)).won).toBe(true);
        await store.slices.commit({ key: succeeded, fence: 1, owner: 'worker-a' }, t + 10, []);
        await store.slices.recordFailure(
          { key: failed, fence: 1 },
          { now: t + 10, error: 'boom', nextAttemptAt: t + 5000, sweepAt: t + 35_000 },
        );

        const second = await store.putJob(jobSpec(id, { v: 2 }));
        expect(second.generation).toBe(first.generation + 1);
        expect(await store.slices.get(pending)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'superseded',
          generation: first.generation,
          fence: 0,
        });
        expect(await store.slices.get(failed)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'superseded',
          generation: first.generation,
          fence: 1,
        });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING', owner: 'worker-a' });
        // The settled ones left the sweep index; the run's claim kept its slice's sweep time.
        expect(await sweepableOf(store, id, t + 86_400_000)).toEqual([
          expect.objectContaining({ scheduledAt: t + 3000, status: 'RUNNING' }),
        ]);

        const run = definitionOf(second);
        const outcomes = await Promise.all(keys.map((key) => store.slices.claim(key, 'worker-b', t + 20, `m2-${key.scheduledAt}`, 1, run)));
        expect(outcomes.map((outcome) => outcome.won)).toEqual([true, false, true, false]);
        const recreated = await store.slices.get(failed);
        expect(recreated).toMatchObject({
          status: 'RUNNING',
          generation: second.generation,
          fence: 2,
          attempts: 1,
          owner: 'worker-b',
          payload: { v: 2 },
          createdAt: t + 20,
        });
        for (const gone of ['skipReason', 'lastError', 'nextAttemptAt', 'finishedAt', 'sweepAt'] as const)
          expect(recreated?.[gone], gone).toBeUndefined();
        expect(await store.slices.get(pending)).toMatchObject({
          status: 'RUNNING',
          generation: second.generation,
          fence: 1,
          attempts: 1,
          payload: { v: 2 },
        });
        expect(await store.slices.get(succeeded)).toMatchObject({ status: 'SUCCEEDED', generation: first.generation, fence: 1 });
        expect(await store.slices.get(running)).toMatchObject({
          status: 'RUNNING',
          generation: first.generation,
          owner: 'worker-a',
          fence: 1,
        });

        // Putting the same definition again settles again (a crash may have cut the first settle short), never the current generation's.
        const leftOver = { jobId: id, scheduledAt: t + 4000 };
        const current = { jobId: id, scheduledAt: t + 5000 };
        expect(await store.slices.enqueue(definitionOf(first), [at(id, t + 4000)], t + 30)).toEqual([leftOver]);
        expect(await store.slices.enqueue(run, [at(id, t + 5000)], t + 30)).toEqual([current]);
        expect((await store.putJob(jobSpec(id, { v: 2 }))).generation).toBe(second.generation);
        expect(await store.slices.get(leftOver)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'superseded',
          generation: first.generation,
        });
        expect(await store.slices.get(current)).toMatchObject({ status: 'ENQUEUED', generation: second.generation });
        expect(await store.slices.get(pending)).toMatchObject({ status: 'RUNNING', generation: second.generation });
      });
    });
  });
}
