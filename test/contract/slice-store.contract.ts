/**
 * The SliceStore contract: claim, renew, fail and finalize. One suite, run
 * by memory.contract.test.ts and dynamo.contract.test.ts; the in-memory store
 * executes the pure rules (isClaimable, slice-transitions.ts) and the DynamoDB
 * store writes them as condition expressions, so a case that passes on one and
 * fails on the other is a rule the two disagree on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOutError, LeaseLostError, MissingResourceError, OutcomeOnRecordError, TooManyWritesError } from '../../lib/core/errors.ts';
import type { BusinessWrite } from '../../lib/core/ports.ts';
import { isTakeover, LEASE_EXPIRY_MARGIN_MS } from '../../lib/core/slice.ts';
import { MAX_BUSINESS_WRITES_PER_COMMIT, MAX_ERROR_CHARS } from '../../lib/core/slice-transitions.ts';
import { CaseSpace, claimed, enqueued, FAST_POLICIES, sweepableOf, type ContractFactory, type ContractInstallation } from './contract-fixture.ts';

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
          status: 'RUNNING', fence: 1, attempts: 1, owner: 'worker-a', leaseExpiresAt: t + 250 + LEASE, leaseMessageId: 'message-a', startedAt: t + 250,
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
        await store.slices.recordFailure(key, 1, { now: t + 100, error: 'boom', nextAttemptAt: t + 2000, sweepAt: t + 40_000 });
        const early = await store.slices.claim(key, 'worker-b', t + 1999, 'message-a');
        expect(early).toMatchObject({ won: false, current: { status: 'FAILED', nextAttemptAt: t + 2000, fence: 1 } });
        const due = await store.slices.claim(key, 'worker-b', t + 2000, 'message-a');
        expect(due.won).toBe(true);
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ status: 'RUNNING', fence: 2, attempts: 2, owner: 'worker-b', lastError: 'boom', leaseExpiresAt: t + 2000 + LEASE, claimedFrom: 'FAILED' });
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
        expect(await store.slices.get(key)).toMatchObject({ owner: 'worker-b', fence: 2, attempts: 2, leaseMessageId: 'message-b', claimedFrom: 'RUNNING' });
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
        expect(duplicate).toMatchObject({ won: false, current: { status: 'RUNNING', owner: 'worker-a', fence: 1, leaseMessageId: 'message-a' } });
        expect((await store.slices.get(key))?.fence).toBe(1);
      });

      it('a final slice is never claimed, however late; a missing one is lost with nothing to show', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('final'), t);
        await store.slices.commit(key, 1, 'worker-a', t + 10, []);
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

    describe('renew', () => {
      it('moves the lease on the fence; a stale fence, a slice no longer running or a missing one is LeaseLostError', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('renew'), t);
        await store.slices.renew(key, 1, t + 1000, LEASE);
        expect((await store.slices.get(key))?.leaseExpiresAt).toBe(t + 1000 + LEASE);
        await expect(store.slices.renew(key, 0, t + 1100, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.slices.renew(key, 2, t + 1100, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await store.slices.recordFailure(key, 1, { now: t + 1200, error: 'x', nextAttemptAt: t + 5000, sweepAt: t + 40_000 });
        await expect(store.slices.renew(key, 1, t + 1300, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        await expect(store.slices.renew({ ...key, scheduledAt: t + 7000 }, 1, t, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        expect((await store.slices.get(key))?.leaseExpiresAt).toBeUndefined();
      });

      it('a zombie cannot renew once a standby took over', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('renew-zombie'), t, 'worker-a', 'message-a');
        expect((await store.slices.claim(key, 'worker-b', t + 10, 'message-a')).won).toBe(true);
        await expect(store.slices.renew(key, 1, t + 20, LEASE)).rejects.toBeInstanceOf(LeaseLostError);
        expect((await store.slices.get(key))?.leaseExpiresAt).toBe(t + 10 + LEASE);
      });
    });

    describe('commit', () => {
      const payout = (id: string): BusinessWrite => ({ put: { tableName: store.businessTable, item: { id, amount: 7 } } });

      it('on the fence: SUCCEEDED, the ledger record and the business write together; the slice leaves the sweep index', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit'), t);
        await store.slices.commit(key, 1, 'worker-a', t + 500, [payout(`${key.jobId}-row`)]);
        expect(await store.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', fence: 1, finishedAt: t + 500 });
        expect(await store.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'worker-a', outcome: 'SUCCEEDED', committedAt: t + 500 });
        expect(await store.businessItem(`${key.jobId}-row`)).toEqual({ id: `${key.jobId}-row`, amount: 7 });
        expect(await sweepableOf(store, key.jobId, t + 86_400_000)).toEqual([]);
      });

      it('a stale fence, or the right fence with another owner, is FencedOutError and writes nothing', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-stale'), t, 'worker-a', 'message-a');
        await expect(store.slices.commit(key, 1, 'worker-z', t + 10, [payout(`${key.jobId}-z`)])).rejects.toBeInstanceOf(FencedOutError);
        expect((await store.slices.claim(key, 'worker-b', t + 20, 'message-a')).won).toBe(true);
        await expect(store.slices.commit(key, 1, 'worker-a', t + 30, [payout(`${key.jobId}-a`)])).rejects.toBeInstanceOf(FencedOutError);
        expect(await store.slices.getLedger(key)).toBeUndefined();
        expect(await store.businessItem(`${key.jobId}-a`)).toBeUndefined();
        expect(await store.businessItem(`${key.jobId}-z`)).toBeUndefined();
        expect(await store.slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 2, owner: 'worker-b' });
      });

      it('the same commit sent again (its reply lost) is recognised as its own and writes once', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-again'), t);
        await store.slices.commit(key, 1, 'worker-a', t + 100, []);
        await expect(store.slices.commit(key, 1, 'worker-a', t + 900, [])).resolves.toBeUndefined();
        expect(await store.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'worker-a', outcome: 'SUCCEEDED', committedAt: t + 100 });
      });

      it('a DEAD on record is never reported committed, nor a commit on record as DEAD', async () => {
        const t = space.instant();
        const { key: dead } = await claimed(store, space.jobId('dead-then-commit'), t);
        await store.slices.recordDead(dead, 1, 'worker-a', t + 100, 'gave up');
        const commitAfterDead = await store.slices.commit(dead, 1, 'worker-a', t + 200, []).catch((error: unknown) => error);
        expect(commitAfterDead).toBeInstanceOf(OutcomeOnRecordError);
        expect((commitAfterDead as OutcomeOnRecordError).recorded).toBe('DEAD');
        await expect(store.slices.recordDead(dead, 1, 'worker-a', t + 300, 'gave up')).resolves.toBeUndefined();
        await expect(store.slices.commit(dead, 2, 'worker-b', t + 300, [])).rejects.toBeInstanceOf(FencedOutError);
        expect(await store.slices.getLedger(dead)).toMatchObject({ outcome: 'DEAD', fence: 1, committedAt: t + 100 });

        const { key: done } = await claimed(store, space.jobId('commit-then-dead'), t);
        await store.slices.commit(done, 1, 'worker-a', t + 100, []);
        const deadAfterCommit = await store.slices.recordDead(done, 1, 'worker-a', t + 200, 'timeout').catch((error: unknown) => error);
        expect(deadAfterCommit).toBeInstanceOf(OutcomeOnRecordError);
        expect((deadAfterCommit as OutcomeOnRecordError).recorded).toBe('SUCCEEDED');
        expect(await store.slices.get(done)).toMatchObject({ status: 'SUCCEEDED' });
      });

      it('more writes than a transaction holds, or a write to a table that does not exist, is refused and writes nothing', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('commit-refused'), t);
        const tooMany = Array.from({ length: MAX_BUSINESS_WRITES_PER_COMMIT + 1 }, (_, i) => payout(`${key.jobId}-${i}`));
        await expect(store.slices.commit(key, 1, 'worker-a', t + 10, tooMany)).rejects.toBeInstanceOf(TooManyWritesError);
        const missing = await store.slices
          .commit(key, 1, 'worker-a', t + 20, [{ put: { tableName: `${store.businessTable}-nope`, item: { id: 'x' } } }])
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
        await store.slices.recordFailure(key, 1, { now: t + 300, error: long, nextAttemptAt: t + 1300, sweepAt: t + 31_300 });
        const stored = await store.slices.get(key);
        expect(stored).toMatchObject({ status: 'FAILED', fence: 1, nextAttemptAt: t + 1300, finishedAt: t + 300, owner: 'worker-a' });
        expect(stored?.lastError).toHaveLength(MAX_ERROR_CHARS);
        expect(stored?.leaseExpiresAt).toBeUndefined();
        expect(await sweepableOf(store, key.jobId, t + 31_300)).toEqual([{ scheduledAt: t, sweepAt: t + 31_300, status: 'FAILED' }]);
        await expect(store.slices.recordFailure(key, 1, { now: t + 400, error: 'again', nextAttemptAt: t + 2000, sweepAt: t + 32_000 })).rejects.toBeInstanceOf(
          LeaseLostError,
        );
        await expect(store.slices.recordFailure(key, 0, { now: t + 400, error: 'stale', nextAttemptAt: t + 2000, sweepAt: t + 32_000 })).rejects.toBeInstanceOf(
          LeaseLostError,
        );
      });

      it('DEAD on the fence: the ledger says DEAD with the error, the slice leaves the sweep index; a stale fence is FencedOutError', async () => {
        const t = space.instant();
        const { key } = await claimed(store, space.jobId('dead'), t, 'worker-a', 'message-a');
        expect((await store.slices.claim(key, 'worker-b', t + 1, 'message-a')).won).toBe(true);
        await expect(store.slices.recordDead(key, 1, 'worker-a', t + 2, 'zombie')).rejects.toBeInstanceOf(FencedOutError);
        await store.slices.recordDead(key, 2, 'worker-b', t + 3, 'x'.repeat(MAX_ERROR_CHARS + 1));
        expect(await store.slices.get(key)).toMatchObject({ status: 'DEAD', fence: 2, finishedAt: t + 3 });
        const ledger = await store.slices.getLedger(key);
        expect(ledger).toMatchObject({ outcome: 'DEAD', fence: 2, owner: 'worker-b' });
        expect(ledger?.error).toHaveLength(MAX_ERROR_CHARS);
        expect(await sweepableOf(store, key.jobId, t + 86_400_000)).toEqual([]);
      });
    });
  });
}
