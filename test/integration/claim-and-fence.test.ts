/**
 * Claiming and fencing against the emulator over HTTP: the claim admits one
 * worker, the fence rejects a stale one, an expired lease admits a standby.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { sliceKeyItem } from '../../lib/aws/dynamo/items.ts';
import { FencedOutError, LeaseLostError } from '../../lib/core/errors.ts';
import { LEASE_EXPIRY_MARGIN_MS, lostClaimAction } from '../../lib/core/slice.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

describe('claim', () => {
  it('16 concurrent claimers of one slice: exactly one holds it', async () => {
    const { key } = await enqueuedSlice(installation, { id: 'race-16' }, wholeSecond(60_000));
    const now = Date.now();
    const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => installation.runtime.slices.claim(key, `w${i}`, now)));
    const winners = outcomes.filter((outcome) => outcome.won);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!;
    if (!winner.won) throw new Error('unreachable');
    expect(winner.slice.fence).toBe(1);
    expect(winner.slice.status).toBe('RUNNING');
    const stored = await installation.runtime.slices.get(key);
    expect(stored?.owner).toBe(winner.slice.owner);
    expect(stored?.fence).toBe(1);
    // Every loser saw the winner's state, for its stand-down decision.
    for (const outcome of outcomes.filter((o) => !o.won)) {
      if (outcome.won) continue;
      expect(outcome.current?.owner).toBe(winner.slice.owner);
    }
  });

  it('repeats the race 10 times without a double winner', async () => {
    for (let round = 0; round < 10; round++) {
      const { key } = await enqueuedSlice(installation, { id: `race-round-${round}` }, wholeSecond(60_000));
      const now = Date.now();
      const outcomes = await Promise.all(Array.from({ length: 16 }, (_, i) => installation.runtime.slices.claim(key, `w${i}`, now)));
      expect(outcomes.filter((outcome) => outcome.won)).toHaveLength(1);
    }
  });
});

describe('lease and fence', () => {
  it('a standby cannot take a live lease, takes an expired one with a higher fence, and the stale worker can neither renew nor commit', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(
      installation,
      { id: 'takeover', policies: { leaseMs: 4000, heartbeatMs: 1000 } },
      wholeSecond(60_000),
    );
    const t0 = Date.now();
    const first = await slices.claim(key, 'worker-a', t0);
    expect(first.won && first.slice.fence).toBe(1);
    if (!first.won) return;
    expect(first.slice.leaseExpiresAt).toBe(t0 + 4000);

    // While A's lease is live, B loses and learns until when it is held.
    const early = await slices.claim(key, 'worker-b', t0 + 3999);
    expect(early.won).toBe(false);
    if (!early.won) expect(early.current?.leaseExpiresAt).toBe(t0 + 4000);

    // A renews on its fence: the lease moves on.
    await slices.renew({ key, fence: 1 }, t0 + 1000, 4000);
    expect((await slices.get(key))?.leaseExpiresAt).toBe(t0 + 5000);
    const stillLive = await slices.claim(key, 'worker-b', t0 + 4500);
    expect(stillLive.won).toBe(false);
    // Just past the lease's end by B's clock is still within the clock-skew margin: A may only be slow-clocked.
    const withinMargin = await slices.claim(key, 'worker-b', t0 + 5000 + LEASE_EXPIRY_MARGIN_MS);
    expect(withinMargin.won).toBe(false);

    // A stops renewing (paused, crashed). Past its lease and the margin, B takes over with fence 2.
    const takeover = await slices.claim(key, 'worker-b', t0 + 5001 + LEASE_EXPIRY_MARGIN_MS);
    expect(takeover.won).toBe(true);
    if (!takeover.won) return;
    expect(takeover.slice.fence).toBe(2);
    expect(takeover.slice.owner).toBe('worker-b');
    expect(takeover.slice.attempts).toBe(2);

    // A wakes up as a zombie: its renewal and its commit are refused by the fence.
    await expect(slices.renew({ key, fence: 1 }, t0 + 9100, 4000)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(slices.commit({ key, fence: 1, owner: 'worker-a' }, t0 + 9200, [])).rejects.toBeInstanceOf(FencedOutError);
    expect(await slices.getLedger(key)).toBeUndefined();

    // B commits on fence 2; the ledger holds B's record.
    await slices.commit({ key, fence: 2, owner: 'worker-b' }, t0 + 9300, []);
    const ledger = await slices.getLedger(key);
    expect(ledger).toMatchObject({ fence: 2, owner: 'worker-b', outcome: 'SUCCEEDED' });
    expect((await slices.get(key))?.status).toBe('SUCCEEDED');

    // Nobody can claim a final slice, however late.
    const late = await slices.claim(key, 'worker-c', t0 + 600_000);
    expect(late.won).toBe(false);
  });

  it("the holder's own message coming back admits a standby before the lease ends by the standby's clock; a duplicate does not", async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'message-takeover' }, wholeSecond(60_000));
    const t0 = Date.now();
    expect((await slices.claim(key, 'worker-a', t0, 'message-1')).won).toBe(true);
    // A duplicate copy (another message id) while the lease is live: refused.
    expect((await slices.claim(key, 'worker-b', t0 + 1000, 'message-2')).won).toBe(false);
    // The holder's message itself is redelivered: SQS saw its visibility lapse. A standby whose clock
    // runs 2 s behind (so the lease still looks live to it) takes over.
    const takeover = await slices.claim(key, 'worker-b', t0 + 4000 - 2000, 'message-1');
    expect(takeover.won).toBe(true);
    if (takeover.won) expect(takeover.slice).toMatchObject({ fence: 2, owner: 'worker-b', leaseMessageId: 'message-1' });
    await expect(slices.renew({ key, fence: 1 }, t0 + 2100, 4000)).rejects.toBeInstanceOf(LeaseLostError);
  });

  it('a zombie with the right fence but another owner cannot commit', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'owner-check' }, wholeSecond(60_000));
    const claim = await slices.claim(key, 'worker-a', Date.now());
    expect(claim.won).toBe(true);
    await expect(slices.commit({ key, fence: 1, owner: 'worker-z' }, Date.now(), [])).rejects.toBeInstanceOf(FencedOutError);
  });

  it('an ambiguous commit retried by its own worker succeeds once and writes once', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'ambiguous' }, wholeSecond(60_000));
    const claim = await slices.claim(key, 'worker-a', Date.now());
    expect(claim.won).toBe(true);
    await slices.commit({ key, fence: 1, owner: 'worker-a' }, Date.now(), []);
    // The reply was "lost": the worker retries the very same commit.
    await expect(slices.commit({ key, fence: 1, owner: 'worker-a' }, Date.now(), [])).resolves.toBeUndefined();
    const ledger = await slices.getLedger(key);
    expect(ledger).toMatchObject({ fence: 1, owner: 'worker-a' });
  });
});

describe('sweep deferral', () => {
  it("a claim leaves the sweep time (no index write); a sweep's deferral never overwrites one a failure set after the sweep read it", async () => {
    const { slices, clients, config } = installation.runtime;
    const { key, job } = await enqueuedSlice(installation, { id: 'defer-race' }, wholeSecond(-60_000));
    const [candidate] = (await slices.findSweepable(job.shard, Date.now(), 200)).filter((found) => found.jobId === 'defer-race');
    expect(candidate).toBeDefined();
    const sweepAtOf = async () =>
      Number(
        (await clients.dynamo.send(new GetItemCommand({ TableName: config.slicesTable, Key: sliceKeyItem(key), ConsistentRead: true })))
          .Item?.sweepAt?.N,
      );
    const claim = await slices.claim(key, 'w1', Date.now());
    expect(claim.won).toBe(true);
    expect(await sweepAtOf()).toBe(candidate!.sweepAt);
    const failedSweepAt = Date.now() + 90_000;
    await slices.recordFailure(
      { key, fence: 1 },
      { now: Date.now(), error: 'boom', nextAttemptAt: Date.now() + 60_000, sweepAt: failedSweepAt },
    );
    await slices.deferSweep(candidate!, Date.now() + 5000);
    expect(await sweepAtOf()).toBe(failedSweepAt);
  });
});

describe("deliveries of the holder's message", () => {
  it("only a later delivery of the holder's message admits a standby; an earlier delivery's claim, resent, does not", async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'later-delivery' }, wholeSecond(60_000));
    const t0 = Date.now();
    expect((await slices.claim(key, 'worker-a', t0, 'message-1', 1)).won).toBe(true);
    // The message came back (delivery 2) to B: A's visibility lapsed, B takes over.
    const takeover = await slices.claim(key, 'worker-b', t0 + 3000, 'message-1', 2);
    expect(takeover.won).toBe(true);
    if (takeover.won) expect(takeover.slice).toMatchObject({ fence: 2, owner: 'worker-b', leaseReceiveCount: 2 });
    // A claim from delivery 1 (a worker that stalled before its claim went out) must not displace B.
    const stale = await slices.claim(key, 'worker-c', t0 + 3500, 'message-1', 1);
    expect(stale.won).toBe(false);
    expect(await slices.get(key)).toMatchObject({ fence: 2, owner: 'worker-b' });
    expect(lostClaimAction(stale.won ? undefined : stale.current, t0 + 3500, 'message-1', 1)).toEqual({ kind: 'leave' });
  });

  it('a renewal that disarms the message-back takeover leaves the standby to wait for the lease to expire', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'disarmed' }, wholeSecond(60_000));
    const t0 = Date.now();
    expect((await slices.claim(key, 'worker-a', t0, 'message-1', 1)).won).toBe(true);
    await slices.renew({ key, fence: 1 }, t0 + 1000, 4000, 'disarm');
    const early = await slices.claim(key, 'worker-b', t0 + 3000, 'message-1', 2);
    expect(early.won).toBe(false);
    if (!early.won)
      expect(lostClaimAction(early.current, t0 + 3000, 'message-1', 2)).toEqual({
        kind: 'hide',
        untilMs: t0 + 5000 + LEASE_EXPIRY_MARGIN_MS,
      });
    expect((await slices.claim(key, 'worker-b', t0 + 5001 + LEASE_EXPIRY_MARGIN_MS, 'message-1', 3)).won).toBe(true);
  });
});
