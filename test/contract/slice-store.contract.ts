/**
 * The SliceStore contract: claim (the claim that creates the slice from its
 * message's definition too), renew, skip, fail and finalize. One suite, run
 * by memory.contract.test.ts and dynamo.contract.test.ts; the in-memory store
 * executes the pure rules (isClaimable, slice-transitions.ts) and the DynamoDB
 * store writes them as condition expressions, so a case that passes on one and
 * fails on the other is a rule the two disagree on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOutError, LeaseLostError, MissingResourceError, OutcomeOnRecordError, TooManyWritesError } from '../../lib/core/errors.ts';
import type { BusinessWrite } from '../../lib/core/ports.ts';
import { definitionOf } from '../../lib/core/job-record.ts';
import { isTakeover, LEASE_EXPIRY_MARGIN_MS, type Slice } from '../../lib/core/slice.ts';
import { MAX_BUSINESS_WRITES_PER_COMMIT, MAX_ERROR_CHARS } from '../../lib/core/slice-transitions.ts';
import {
  CaseSpace,
  claimed,
  createdByClaim,
  enqueued,
  FAST_POLICIES,
  jobSpec,
  sweepableOf,
  type ContractFactory,
  type ContractInstallation,
} from './contract-fixture.ts';

const LEASE = FAST_POLICIES.leaseMs;

export function sliceStoreContract(label: string, factory: ContractFactory): void {
  describe(`SliceStore contract: ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());

    describe('claim', () => {
      it('takes an ENQUEUED slice: fence 1, lease from now, the message it came with; its sweep time stays (no index write)', async () => {
        const t = space.instant();
        const { keys } = await enqueued(store, space.jobId('enqueued'), [t], t - 60_000);
        const claim = await store.slices.claim(keys[0]!, 'worker-a', t + 250, 'message-a');
        expect(claim.won).toBe(true);
        expect(await store.slices.get(keys[0]!)).toMatchObject({
          status: 'RUNNING',
          fence: 1,
          attempts: 1,
          owner: 'worker-a',
          leaseExpiresAt: t + 250 + LEASE,
          leaseMessageId: 'message-a',
          startedAt: t + 250,
          claimedFrom: 'ENQUEUED',
        });
        expect(claim.won && claim.slice.claimedFrom).toBe('ENQUEUED');
        const sweepAt = t + 30_000;
        expect(await sweepableOf(store, keys[0]!.jobId, sweepAt - 1)).toEqual([]);
        expect(await sweepableOf(store, keys[0]!.jobId, sweepAt)).toEqual([{ scheduledAt: t, sweepAt, status: 'RUNNING' }]);
      });

      it('a FAILED slice only once its retry is due; the retry drops nextAttemptAt and keeps the last error', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('failed'), t);
        await store.slices.recordFailure({ key, fence: 1 }, { now: t + 100, error: 'boom', nextAttemptAt: t + 2000, sweepAt: t + 40_000 });
        const early = await store.slices.claim(key, 'worker-b', t + 1999, 'message-a');
        expect(early).toMatchObject({ won: false, current: { status: 'FAILED', nextAttemptAt: t + 2000, fence: 1 } });
        const due = await store.slices.claim(key, 'worker-b', t + 2000, 'message-a');
        expect(due.won).toBe(true);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({
          status: 'RUNNING',
          fence: 2,
          attempts: 2,
          owner: 'worker-b',
          lastError: 'boom',
          leaseExpiresAt: t + 2000 + LEASE,
          claimedFrom: 'FAILED',
        });
        expect(due.won && isTakeover(due.slice)).toBe(false);
        expect(stored?.nextAttemptAt).toBeUndefined();
      });

      it('an expired lease admits another message only past the skew margin', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('expired'), t, 'worker-a', 'message-a');
        const expiry = t + LEASE;
        const atMargin = await store.slices.claim(key, 'worker-b', expiry + LEASE_EXPIRY_MARGIN_MS, 'message-b');
        expect(atMargin).toMatchObject({ won: false, current: { owner: 'worker-a', fence: 1, leaseExpiresAt: expiry } });
        const past = await store.slices.claim(key, 'worker-b', expiry + LEASE_EXPIRY_MARGIN_MS + 1, 'message-b');
        expect(past.won).toBe(true);
        expect(past.won && isTakeover(past.slice)).toBe(true);
        expect(await store.slices.get(key)).toMatchObject({
          owner: 'worker-b',
          fence: 2,
          attempts: 2,
          leaseMessageId: 'message-b',
          claimedFrom: 'RUNNING',
        });
      });

      it('an expired lease admits a claim with no message id past the margin, and drops the old message id', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('expired-nomsg'), t);
        expect((await store.slices.claim(key, 'worker-b', t + LEASE + LEASE_EXPIRY_MARGIN_MS)).won).toBe(false);
        expect((await store.slices.claim(key, 'worker-b', t + LEASE + LEASE_EXPIRY_MARGIN_MS + 1)).won).toBe(true);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ owner: 'worker-b', fence: 2 });
        expect(stored?.leaseMessageId).toBeUndefined();
      });

      it("the holder's own message back admits a standby at once, even while the lease is live by its clock", async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('own-message'), t, 'worker-a', 'message-a');
        const back = await store.slices.claim(key, 'worker-b', t + 1, 'message-a');
        expect(back.won).toBe(true);
        expect(back.won && isTakeover(back.slice)).toBe(true);
        expect(await store.slices.get(key)).toMatchObject({ owner: 'worker-b', fence: 2, leaseMessageId: 'message-a' });
      });

      it('a duplicate message (another id) loses to a live lease and sees the holder', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('duplicate'), t, 'worker-a', 'message-a');
        const duplicate = await store.slices.claim(key, 'worker-b', t + 1000, 'message-b');
        expect(duplicate).toMatchObject({
          won: false,
          current: { status: 'RUNNING', owner: 'worker-a', fence: 1, leaseMessageId: 'message-a' },
        });
        expect((await store.slices.get(key))?.fence).toBe(1);
      });

      it('a final slice is never claimed, however late; a missing one is lost with nothing to show', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('final'), t);
        await store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 10, []);
        const late = await store.slices.claim(key, 'worker-b', t + 86_400_000, 'message-a');
        expect(late).toMatchObject({ won: false, current: { status: 'SUCCEEDED', fence: 1 } });
        const missing = await store.slices.claim({ jobId: key.jobId, scheduledAt: t + 1000 }, 'worker-b', t);
        expect(missing).toEqual({ won: false, current: undefined });
      });

      it('16 concurrent claims of one slice: exactly one wins, and every loser sees the winner', async () => {
        const t = space.instant();
        const { keys } = await enqueued(store, space.jobId('race'), [t], t);
        const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => store.slices.claim(keys[0]!, `w${i}`, t, `m${i}`)));
        const winners = outcomes.flatMap((outcome) => (outcome.won ? [outcome.slice] : []));
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ fence: 1, attempts: 1 });
        for (const outcome of outcomes) if (!outcome.won) expect(outcome.current?.owner).toBe(winners[0]!.owner);
      });
    });

    describe("the claim that creates the slice (a message carrying its generation's definition)", () => {
      /** What an older generation's last run leaves on an instant that a slice created again must not carry. */
      const LAST_RUN_FIELDS = [
        'skipReason',
        'lastError',
        'nextAttemptAt',
        'finishedAt',
        'bufferedAt',
        'sweepAt',
        'missedUntil',
        'missedCount',
      ] as const;
      const lostTo = (outcome: { won: boolean; current?: Slice }) => (outcome.won ? undefined : outcome.current);

      it('creates a RUNNING slice with the definition where there is none: claimed from ENQUEUED, fence 1, attempts 1, out of the sweep index', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('create'), { v: 1 }));
        const key = { jobId: job.id, scheduledAt: t };
        const claim = await store.slices.claim(key, 'worker-a', t + 250, 'message-a', 1, definitionOf(job));
        expect(claim.won).toBe(true);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({
          status: 'RUNNING',
          claimedFrom: 'ENQUEUED',
          fence: 1,
          attempts: 1,
          owner: 'worker-a',
          leaseExpiresAt: t + 250 + LEASE,
          leaseMessageId: 'message-a',
          leaseReceiveCount: 1,
          startedAt: t + 250,
          createdAt: t + 250,
          generation: job.generation,
          handler: 'h',
          policies: job.policies,
          payload: { v: 1 },
          shard: job.shard,
        });
        expect(claim.won && claim.slice).toEqual(stored);
        expect(claim.won && isTakeover(claim.slice)).toBe(false);
        // A claim costs no index write: the reconciler, not the sweep, follows a slice its claim created.
        expect(stored?.sweepAt).toBeUndefined();
        expect(await sweepableOf(store, job.id, t + 86_400_000)).toEqual([]);
        expect(await store.slices.getLedger(key)).toBeUndefined();
      });

      it('racing creating claims of one instant (duplicate sends): exactly one wins, and every loser sees the winner', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('create-race')));
        const key = { jobId: job.id, scheduledAt: t };
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, i) => store.slices.claim(key, `w${i}`, t, `m${i}`, 1, definitionOf(job))),
        );
        const winners = outcomes.flatMap((outcome) => (outcome.won ? [outcome.slice] : []));
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ fence: 1, attempts: 1, claimedFrom: 'ENQUEUED' });
        for (const outcome of outcomes)
          if (!outcome.won) expect(outcome.current).toMatchObject({ status: 'RUNNING', owner: winners[0]!.owner, fence: 1 });
        expect(await store.slices.get(key)).toMatchObject({ owner: winners[0]!.owner, fence: 1, attempts: 1 });
      });

      it("a message of the slice's own generation claims an existing ENQUEUED one as before; the slice keeps its own definition and sweep time", async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('create-existing'), { v: 1 }));
        const key = { jobId: job.id, scheduledAt: t };
        // An operator's slot of this generation with its own payload; the scanner's message for the same instant carries the job's.
        expect(
          await store.slices.enqueue({ ...definitionOf(job), payload: { slot: 'own' } }, [{ ...key, sweepAt: t + 30_000 }], t - 60_000),
        ).toEqual([key]);
        const claim = await store.slices.claim(key, 'worker-a', t, 'message-a', 1, definitionOf(job));
        expect(claim.won).toBe(true);
        expect(await store.slices.get(key)).toMatchObject({
          status: 'RUNNING',
          claimedFrom: 'ENQUEUED',
          fence: 1,
          attempts: 1,
          owner: 'worker-a',
          leaseExpiresAt: t + LEASE,
          createdAt: t - 60_000,
          sweepAt: t + 30_000,
          generation: job.generation,
          payload: { slot: 'own' },
        });
        const duplicate = await store.slices.claim(key, 'worker-b', t + 10, 'message-b', 1, definitionOf(job));
        expect(lostTo(duplicate)).toMatchObject({ owner: 'worker-a', fence: 1 });
        // The same generation never re-creates its own instant, even once it is final.
        await store.slices.skipClaimed({ key, fence: 1 }, 'overlap', t + 20);
        const late = await store.slices.claim(key, 'worker-b', t + 30, 'message-c', 1, definitionOf(job));
        expect(lostTo(late)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', fence: 1 });
      });

      it('a message of a newer generation re-creates an instant an older one left SKIPPED: the fence grows, attempts 1, the last run gone', async () => {
        const t = space.instant();
        const id = space.jobId('recreate');
        const first = await store.putJob(jobSpec(id, { v: 1 }));
        const { key } = await createdByClaim(store, first, t, 'worker-a', 'message-a');
        await store.slices.recordFailure({ key, fence: 1 }, { now: t + 100, error: 'boom', nextAttemptAt: t + 5000, sweepAt: t + 35_000 });
        // The change settles the retry that had not started yet.
        const second = await store.putJob(jobSpec(id));
        expect(await store.slices.get(key)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'superseded',
          generation: first.generation,
          fence: 1,
          lastError: 'boom',
        });

        const claim = await store.slices.claim(key, 'worker-b', t + 200, 'message-b', 2, definitionOf(second));
        expect(claim.won).toBe(true);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({
          status: 'RUNNING',
          claimedFrom: 'ENQUEUED',
          generation: second.generation,
          fence: 2,
          attempts: 1,
          owner: 'worker-b',
          leaseMessageId: 'message-b',
          leaseReceiveCount: 2,
          leaseExpiresAt: t + 200 + LEASE,
          startedAt: t + 200,
          createdAt: t + 200,
        });
        // The new generation has no payload: the old one's is not left behind either.
        for (const gone of [...LAST_RUN_FIELDS, 'payload'] as const) expect(stored?.[gone], gone).toBeUndefined();
        expect(claim.won && claim.slice).toEqual(stored);
        expect(await store.slices.getLedger(key)).toBeUndefined();
      });

      it('racing re-creating claims of one SKIPPED instant: exactly one wins', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('recreate-race')));
        const older = definitionOf(job);
        const newer = { ...older, generation: older.generation + 1 };
        expect(await store.slices.settleAbsent(job.id, older, [t], 'paused', t)).toBe(1);
        const key = { jobId: job.id, scheduledAt: t };
        const outcomes = await Promise.all(
          Array.from({ length: 6 }, (_, i) => store.slices.claim(key, `w${i}`, t + 10, `m${i}`, 1, newer)),
        );
        const winners = outcomes.flatMap((outcome) => (outcome.won ? [outcome.slice] : []));
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ status: 'RUNNING', generation: newer.generation, fence: 1, attempts: 1 });
        for (const outcome of outcomes)
          if (!outcome.won) expect(outcome.current).toMatchObject({ status: 'RUNNING', owner: winners[0]!.owner });
      });

      it("a newer generation's message re-creates neither a range record, nor a run, nor an older generation's slice that has not been settled", async () => {
        const t = space.instant();
        const id = space.jobId('recreate-not');
        const first = await store.putJob(jobSpec(id));
        const older = definitionOf(first);
        const newer = { ...older, generation: older.generation + 1 };
        await store.slices.recordRange(id, older, { from: t, to: t + 10_000, count: 10, reason: 'misfire' }, t + 20_000);
        const { key: succeeded } = await createdByClaim(store, first, t + 20_000);
        await store.slices.commit({ key: succeeded, fence: 1, owner: 'worker-a' }, t + 20_100, []);
        const { key: running } = await createdByClaim(store, first, t + 21_000);
        const pending = { jobId: id, scheduledAt: t + 22_000 };
        await store.slices.enqueue(older, [{ ...pending, sweepAt: t + 52_000 }], t);
        // Long after the run's lease ended: a newer generation's message is still no takeover of an older generation's run.
        const now = t + 60_000;

        const range = await store.slices.claim({ jobId: id, scheduledAt: t }, 'worker-b', now, 'message-b', 1, newer);
        expect(lostTo(range)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'misfire',
          missedUntil: t + 10_000,
          generation: older.generation,
          fence: 0,
        });
        const done = await store.slices.claim(succeeded, 'worker-b', now, 'message-b', 1, newer);
        expect(lostTo(done)).toMatchObject({ status: 'SUCCEEDED', generation: older.generation, fence: 1 });
        const run = await store.slices.claim(running, 'worker-b', now, 'message-b', 1, newer);
        expect(lostTo(run)).toMatchObject({ status: 'RUNNING', owner: 'worker-a', generation: older.generation, fence: 1 });
        const unsettled = await store.slices.claim(pending, 'worker-b', now, 'message-b', 1, newer);
        expect(lostTo(unsettled)).toMatchObject({ status: 'ENQUEUED', generation: older.generation, fence: 0 });
        expect(await store.slices.get({ jobId: id, scheduledAt: t })).toMatchObject({
          status: 'SKIPPED',
          missedUntil: t + 10_000,
          fence: 0,
        });
        expect(await store.slices.get(running)).toMatchObject({ status: 'RUNNING', owner: 'worker-a', fence: 1 });
        expect(await store.slices.get(pending)).toMatchObject({ status: 'ENQUEUED', fence: 0, attempts: 0 });
      });

      it("a message of an older generation never claims a newer generation's slice, whatever its state", async () => {
        const t = space.instant();
        const id = space.jobId('older-message');
        const job = await store.putJob(jobSpec(id));
        const newer = { ...definitionOf(job), generation: job.generation + 1 };
        const older = definitionOf(job);
        const at = (offset: number) => ({ jobId: id, scheduledAt: t + offset });
        await store.slices.enqueue(newer, [{ ...at(0), sweepAt: t + 30_000 }], t);
        await store.slices.settleAbsent(id, newer, [at(1000).scheduledAt], 'superseded', t);
        const failed = await store.slices.claim(at(2000), 'worker-a', t, 'message-a', 1, newer);
        expect(failed.won).toBe(true);
        await store.slices.recordFailure(
          { key: at(2000), fence: 1 },
          { now: t + 10, error: 'boom', nextAttemptAt: t + 1000, sweepAt: t + 31_000 },
        );
        expect((await store.slices.claim(at(3000), 'worker-a', t, 'message-a', 1, newer)).won).toBe(true);
        // Every one of them would be claimable by a message of its own generation now (retry due, lease long over).
        const now = t + 60_000;

        for (const [offset, status] of [
          [0, 'ENQUEUED'],
          [1000, 'SKIPPED'],
          [2000, 'FAILED'],
          [3000, 'RUNNING'],
        ] as const) {
          const outcome = await store.slices.claim(at(offset), 'worker-b', now, 'message-old', 1, older);
          expect(lostTo(outcome), status).toMatchObject({ status, generation: newer.generation });
          expect((await store.slices.get(at(offset)))?.owner, status).not.toBe('worker-b');
        }
        expect((await store.slices.claim(at(2000), 'worker-b', now, 'message-new', 1, newer)).won).toBe(true);
      });

      it('without a definition (a swept slice, an operator slot), a missing slice is a lost claim with nothing to show, and none is created', async () => {
        const t = space.instant();
        const key = { jobId: space.jobId('no-definition'), scheduledAt: t };
        expect(await store.slices.claim(key, 'worker-a', t, 'message-a', 1)).toEqual({ won: false, current: undefined });
        expect(await store.slices.claim(key, 'worker-a', t)).toEqual({ won: false, current: undefined });
        expect(await store.slices.get(key)).toBeUndefined();
      });
    });

    describe('renew', () => {
      it('moves the lease on the fence; a stale fence, a slice no longer running or a missing one is LeaseLostError', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('renew'), t);
        await store.slices.renew({ key, fence: 1 }, t + 1000, LEASE);
        expect((await store.slices.get(key))?.leaseExpiresAt).toBe(t + 1000 + LEASE);
        await expect(store.slices.renew({ key, fence: 0 }, t + 1100, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.slices.renew({ key, fence: 2 }, t + 1100, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await store.slices.recordFailure({ key, fence: 1 }, { now: t + 1200, error: 'x', nextAttemptAt: t + 5000, sweepAt: t + 40_000 });
        await expect(store.slices.renew({ key, fence: 1 }, t + 1300, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.slices.renew({ key: { ...key, scheduledAt: t + 7000 }, fence: 1 }, t, LEASE)).rejects.toBeInstanceOf(
          LeaseLostError,
        );
        expect((await store.slices.get(key))?.leaseExpiresAt).toBeUndefined();
      });

      it('a disarming renewal stops the holder`s message back admitting a standby; a re-arming one makes it admit one again', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('renew-arming'), t, 'worker-a', 'message-a');
        await store.slices.renew({ key, fence: 1 }, t + 1000, LEASE, 'disarm');
        expect((await store.slices.get(key))?.leaseMessageId).toBeUndefined();
        expect((await store.slices.claim(key, 'worker-b', t + 1500, 'message-a', 2)).won).toBe(false);
        await store.slices.renew({ key, fence: 1 }, t + 2000, LEASE, { rearm: 'message-a' });
        expect(await store.slices.get(key)).toMatchObject({ leaseMessageId: 'message-a', leaseExpiresAt: t + 2000 + LEASE, fence: 1 });
        const back = await store.slices.claim(key, 'worker-b', t + 2500, 'message-a', 2);
        expect(back.won).toBe(true);
        // Re-armed, the lease is still fenced: the old holder's next renewal is refused.
        await expect(store.slices.renew({ key, fence: 1 }, t + 3000, LEASE, { rearm: 'message-a' })).rejects.toBeInstanceOf(LeaseLostError);
      });

      it('a zombie cannot renew once a standby took over', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('renew-zombie'), t, 'worker-a', 'message-a');
        expect((await store.slices.claim(key, 'worker-b', t + 10, 'message-a')).won).toBe(true);
        await expect(store.slices.renew({ key, fence: 1 }, t + 20, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        expect((await store.slices.get(key))?.leaseExpiresAt).toBe(t + 10 + LEASE);
      });
    });

    describe('skipClaimed', () => {
      it('RUNNING on the fence to SKIPPED with the reason, out of the sweep index, the lease dropped; a stale fence is LeaseLostError', async () => {
        const t = space.instant();
        const id = space.jobId('skip');
        const { key, slice } = await claimed(store, id, t);
        await expect(store.slices.skipClaimed({ key, fence: slice.fence + 1 }, 'overlap', t + 10)).rejects.toBeInstanceOf(LeaseLostError);
        await store.slices.skipClaimed({ key, fence: slice.fence }, 'overlap', t + 10);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap', fence: slice.fence, finishedAt: t + 10 });
        for (const gone of ['owner', 'leaseExpiresAt', 'leaseMessageId', 'leaseReceiveCount', 'sweepAt'] as const)
          expect(stored?.[gone], gone).toBeUndefined();
        expect(await sweepableOf(store, id, Number.MAX_SAFE_INTEGER)).toEqual([]);
        await expect(store.slices.skipClaimed({ key, fence: slice.fence }, 'overlap', t + 20)).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.slices.get(key)).toMatchObject({ finishedAt: t + 10 });
      });

      it('ends a claimed slice MISSED when asked (claimed past its catch-up window), with the reason, out of the sweep index', async () => {
        const t = space.instant();
        const id = space.jobId('skip-missed');
        const { key, slice } = await claimed(store, id, t);
        await store.slices.skipClaimed({ key, fence: slice.fence }, 'catchUp', t + 10, 'MISSED');
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ status: 'MISSED', skipReason: 'catchUp', fence: slice.fence, finishedAt: t + 10 });
        for (const gone of ['owner', 'leaseExpiresAt', 'sweepAt'] as const) expect(stored?.[gone], gone).toBeUndefined();
        expect(await sweepableOf(store, id, Number.MAX_SAFE_INTEGER)).toEqual([]);
        await expect(store.slices.skipClaimed({ key, fence: slice.fence }, 'catchUp', t + 20, 'MISSED')).rejects.toBeInstanceOf(
          LeaseLostError,
        );
      });

      it('skips a run its claim created (the job moved on since the message was sent); not a FAILED slice, nor a missing one', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('skip-created')));
        const { key } = await createdByClaim(store, job, t, 'worker-a', 'message-a');
        await store.slices.skipClaimed({ key, fence: 1 }, 'superseded', t + 10);
        expect(await store.slices.get(key)).toMatchObject({
          status: 'SKIPPED',
          skipReason: 'superseded',
          fence: 1,
          generation: job.generation,
        });

        const { key: failed } = await createdByClaim(store, job, t + 1000, 'worker-a', 'message-b');
        await store.slices.recordFailure(
          { key: failed, fence: 1 },
          { now: t + 1100, error: 'boom', nextAttemptAt: t + 3000, sweepAt: t + 33_000 },
        );
        await expect(store.slices.skipClaimed({ key: failed, fence: 1 }, 'superseded', t + 1200)).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.slices.get(failed)).toMatchObject({ status: 'FAILED' });
        await expect(
          store.slices.skipClaimed({ key: { jobId: job.id, scheduledAt: t + 2000 }, fence: 1 }, 'superseded', t),
        ).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.slices.get({ jobId: job.id, scheduledAt: t + 2000 })).toBeUndefined();
      });
    });

    describe('commit', () => {
      const payout = (id: string): BusinessWrite => ({ put: { tableName: store.businessTable, item: { id, amount: 7 } } });

      it('on the fence: SUCCEEDED, the ledger record and the business write together; the slice leaves the sweep index', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit'), t);
        await store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 500, [payout(`${key.jobId}-row`)]);
        expect(await store.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', fence: 1, finishedAt: t + 500 });
        expect(await store.slices.getLedger(key)).toMatchObject({
          fence: 1,
          owner: 'worker-a',
          outcome: 'SUCCEEDED',
          committedAt: t + 500,
        });
        expect(await store.businessItem(`${key.jobId}-row`)).toEqual({ id: `${key.jobId}-row`, amount: 7 });
        expect(await sweepableOf(store, key.jobId, t + 86_400_000)).toEqual([]);
      });

      it('a stale fence, or the right fence with another owner, is FencedOutError and writes nothing', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-stale'), t, 'worker-a', 'message-a');
        await expect(store.slices.commit({ key, fence: 1, owner: 'worker-z' }, t + 10, [payout(`${key.jobId}-z`)])).rejects.toBeInstanceOf(
          FencedOutError,
        );
        expect((await store.slices.claim(key, 'worker-b', t + 20, 'message-a')).won).toBe(true);
        await expect(store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 30, [payout(`${key.jobId}-a`)])).rejects.toBeInstanceOf(
          FencedOutError,
        );
        expect(await store.slices.getLedger(key)).toBeUndefined();
        expect(await store.businessItem(`${key.jobId}-a`)).toBeUndefined();
        expect(await store.businessItem(`${key.jobId}-z`)).toBeUndefined();
        expect(await store.slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 2, owner: 'worker-b' });
      });

      it('the same commit sent again (its reply lost) is recognised as its own and writes once', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-again'), t);
        await store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 100, []);
        await expect(store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 900, [])).resolves.toBeUndefined();
        expect(await store.slices.getLedger(key)).toMatchObject({
          fence: 1,
          owner: 'worker-a',
          outcome: 'SUCCEEDED',
          committedAt: t + 100,
        });
      });

      it('a DEAD on record is never reported committed, nor a commit on record as DEAD', async () => {
        const t = space.instant();
        const { key: dead } = await claimed(store, space.jobId('dead-then-commit'), t);
        await store.slices.recordDead({ key: dead, fence: 1, owner: 'worker-a' }, t + 100, 'gave up');
        const commitAfterDead = await store.slices
          .commit({ key: dead, fence: 1, owner: 'worker-a' }, t + 200, [])
          .catch((error: unknown) => error);
        expect(commitAfterDead).toBeInstanceOf(OutcomeOnRecordError);
        expect((commitAfterDead as OutcomeOnRecordError).recorded).toBe('DEAD');
        await expect(store.slices.recordDead({ key: dead, fence: 1, owner: 'worker-a' }, t + 300, 'gave up')).resolves.toBeUndefined();
        await expect(store.slices.commit({ key: dead, fence: 2, owner: 'worker-b' }, t + 300, [])).rejects.toBeInstanceOf(FencedOutError);
        expect(await store.slices.getLedger(dead)).toMatchObject({ outcome: 'DEAD', fence: 1, committedAt: t + 100 });

        const { key: done } = await claimed(store, space.jobId('commit-then-dead'), t);
        await store.slices.commit({ key: done, fence: 1, owner: 'worker-a' }, t + 100, []);
        const deadAfterCommit = await store.slices
          .recordDead({ key: done, fence: 1, owner: 'worker-a' }, t + 200, 'timeout')
          .catch((error: unknown) => error);
        expect(deadAfterCommit).toBeInstanceOf(OutcomeOnRecordError);
        expect((deadAfterCommit as OutcomeOnRecordError).recorded).toBe('SUCCEEDED');
        expect(await store.slices.get(done)).toMatchObject({ status: 'SUCCEEDED' });
      });

      it('more writes than a transaction holds, or a write to a table that does not exist, is refused and writes nothing', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-refused'), t);
        const tooMany = Array.from({ length: MAX_BUSINESS_WRITES_PER_COMMIT + 1 }, (_, i) => payout(`${key.jobId}-${i}`));
        await expect(store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 10, tooMany)).rejects.toBeInstanceOf(TooManyWritesError);
        const missing = await store.slices
          .commit({ key, fence: 1, owner: 'worker-a' }, t + 20, [{ put: { tableName: `${store.businessTable}-nope`, item: { id: 'x' } } }])
          .catch((error: unknown) => error);
        expect(missing).toBeInstanceOf(MissingResourceError);
        expect((missing as MissingResourceError).resourceName).toBe(`${store.businessTable}-nope`);
        expect(await store.slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 1 });
        expect(await store.slices.getLedger(key)).toBeUndefined();
      });
    });

    describe('recordFailure and recordDead', () => {
      it('a failure on the fence: FAILED with the retry time, the error cut to its limit, the lease gone, the sweep time set', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('fail'), t);
        const long = 'e'.repeat(MAX_ERROR_CHARS + 500);
        await store.slices.recordFailure({ key, fence: 1 }, { now: t + 300, error: long, nextAttemptAt: t + 1300, sweepAt: t + 31_300 });
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ status: 'FAILED', fence: 1, nextAttemptAt: t + 1300, finishedAt: t + 300, owner: 'worker-a' });
        expect(stored?.lastError).toHaveLength(MAX_ERROR_CHARS);
        expect(stored?.leaseExpiresAt).toBeUndefined();
        expect(await sweepableOf(store, key.jobId, t + 31_300)).toEqual([{ scheduledAt: t, sweepAt: t + 31_300, status: 'FAILED' }]);
        await expect(
          store.slices.recordFailure({ key, fence: 1 }, { now: t + 400, error: 'again', nextAttemptAt: t + 2000, sweepAt: t + 32_000 }),
        ).rejects.toBeInstanceOf(LeaseLostError);
        await expect(
          store.slices.recordFailure({ key, fence: 0 }, { now: t + 400, error: 'stale', nextAttemptAt: t + 2000, sweepAt: t + 32_000 }),
        ).rejects.toBeInstanceOf(LeaseLostError);
      });

      it('a failure of a run its claim created puts it into the sweep index at the sweep time given', async () => {
        const t = space.instant();
        const job = await store.putJob(jobSpec(space.jobId('fail-created')));
        const { key } = await createdByClaim(store, job, t);
        expect(await sweepableOf(store, job.id, Number.MAX_SAFE_INTEGER)).toEqual([]);
        await store.slices.recordFailure({ key, fence: 1 }, { now: t + 300, error: 'boom', nextAttemptAt: t + 1300, sweepAt: t + 31_300 });
        expect(await sweepableOf(store, job.id, t + 31_299)).toEqual([]);
        expect(await sweepableOf(store, job.id, t + 31_300)).toEqual([{ scheduledAt: t, sweepAt: t + 31_300, status: 'FAILED' }]);
      });

      it('DEAD on the fence: the ledger says DEAD with the error, the slice leaves the sweep index; a stale fence is FencedOutError', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('dead'), t, 'worker-a', 'message-a');
        expect((await store.slices.claim(key, 'worker-b', t + 1, 'message-a')).won).toBe(true);
        await expect(store.slices.recordDead({ key, fence: 1, owner: 'worker-a' }, t + 2, 'zombie')).rejects.toBeInstanceOf(FencedOutError);
        await store.slices.recordDead({ key, fence: 2, owner: 'worker-b' }, t + 3, 'x'.repeat(MAX_ERROR_CHARS + 1));
        expect(await store.slices.get(key)).toMatchObject({ status: 'DEAD', fence: 2, finishedAt: t + 3 });
        const ledger = await store.slices.getLedger(key);
        expect(ledger).toMatchObject({ outcome: 'DEAD', fence: 2, owner: 'worker-b' });
        expect(ledger?.error).toHaveLength(MAX_ERROR_CHARS);
        expect(await sweepableOf(store, key.jobId, t + 86_400_000)).toEqual([]);
      });
    });
  });
}
