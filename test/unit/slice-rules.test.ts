import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, retryDelayMs } from '../../lib/core/backoff.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { executionKey, parseExecutionKey } from '../../lib/core/execution-key.ts';
import { MalformedMessageError } from '../../lib/core/errors.ts';
import { isOwnCommit } from '../../lib/core/ledger.ts';
import { decodeScanMessage, decodeWorkMessage, encodeWorkMessage } from '../../lib/core/messages.ts';
import { shardOf } from '../../lib/core/shard.ts';
import {
  afterFailure,
  isClaimable,
  isFinal,
  isOwnClaimResent,
  isRecreatable,
  LEASE_EXPIRY_MARGIN_MS,
  lostClaimAction,
  SliceStatus,
  sweepAgainAt,
  sweepAtFor,
  type Slice,
} from '../../lib/core/slice.ts';
import { distribution } from '../../lib/core/stats.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';

const clock = new ManualClock(Date.parse('2026-11-29T12:00:00Z'));
const slice = (overrides: Partial<Slice>): Slice => ({
  jobId: 'job',
  scheduledAt: clock.now(),
  status: SliceStatus.Enqueued,
  fence: 0,
  attempts: 0,
  handler: 'h',
  generation: 1,
  policies: DEFAULT_POLICIES,
  shard: 0,
  createdAt: clock.now(),
  ...overrides,
});

describe('claim rule', () => {
  it('admits an enqueued slice, a due retry and an expired lease; nothing else', () => {
    const now = clock.now();
    expect(isClaimable(slice({}), now)).toBe(true);
    expect(isClaimable(slice({ status: 'FAILED', nextAttemptAt: now }), now)).toBe(true);
    expect(isClaimable(slice({ status: 'FAILED', nextAttemptAt: now + 1 }), now)).toBe(false);
    // An expired lease is judged by another process's clock, so it must be past its end by the skew margin.
    expect(isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now - LEASE_EXPIRY_MARGIN_MS - 1 }), now)).toBe(true);
    expect(isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now - LEASE_EXPIRY_MARGIN_MS }), now)).toBe(false);
    expect(isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now - 1 }), now)).toBe(false);
    // The holder's own message back: its heartbeats lapsed by the queue's clock.
    expect(isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now + 3000, leaseMessageId: 'm1' }), now, 'm1')).toBe(true);
    expect(isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now + 3000, leaseMessageId: 'm1' }), now, 'm2')).toBe(false);
    // The very request that won, sent again: not a second win.
    expect(
      isClaimable(slice({ status: 'RUNNING', leaseExpiresAt: now + 3000, leaseMessageId: 'm1', claimToken: 't1' }), now, 'm1', 't1'),
    ).toBe(false);
    expect(isOwnClaimResent(slice({ status: 'RUNNING', owner: 'w1', claimToken: 't1' }), 'w1', 't1')).toBe(true);
    expect(isOwnClaimResent(slice({ status: 'RUNNING', owner: 'w2', claimToken: 't1' }), 'w1', 't1')).toBe(false);
    for (const status of ['SUCCEEDED', 'DEAD', 'SKIPPED', 'MISSED'] as const) {
      expect(isFinal(status)).toBe(true);
      expect(isClaimable(slice({ status }), now)).toBe(false);
    }
  });

  it('a lost claim drops the message for a final or missing slice, and hides it until a live lease ends', () => {
    const now = clock.now();
    expect(lostClaimAction(undefined, now)).toEqual({ kind: 'drop', reason: 'missing' });
    expect(lostClaimAction(slice({ status: 'SUCCEEDED' }), now)).toEqual({ kind: 'drop', reason: 'final' });
    expect(lostClaimAction(slice({ status: 'RUNNING', leaseExpiresAt: now + 3000 }), now)).toEqual({
      kind: 'hide',
      untilMs: now + 3000 + LEASE_EXPIRY_MARGIN_MS,
    });
    expect(lostClaimAction(slice({ status: 'FAILED', nextAttemptAt: now + 500 }), now)).toEqual({ kind: 'hide', untilMs: now + 500 });
    // A copy other than the holder's message is dropped: the holder's own message is the takeover path.
    const held = slice({ status: 'RUNNING', leaseExpiresAt: now + 3000, leaseMessageId: 'm1' });
    expect(lostClaimAction(held, now, 'm2')).toEqual({ kind: 'drop', reason: 'duplicate' });
    expect(lostClaimAction(held, now)).toEqual({ kind: 'hide', untilMs: now + 3000 + LEASE_EXPIRY_MARGIN_MS });
  });

  it("a message carrying its generation's definition creates the slice, re-creates an older generation's SKIPPED one, and claims only its own", () => {
    const now = clock.now();
    // Without a slice: only a message that can create it (a key alone cannot).
    expect(isClaimable(undefined, now, 'm1', 't1', 1, 3)).toBe(true);
    expect(isClaimable(undefined, now, 'm1', 't1', 1)).toBe(false);
    // An older generation skipped this instant (a pause, a change): the newer generation runs it.
    const skippedByChange = slice({ status: 'SKIPPED', skipReason: 'paused', generation: 2 });
    expect(isRecreatable(skippedByChange, 3)).toBe(true);
    expect(isClaimable(skippedByChange, now, 'm1', 't1', 1, 3)).toBe(true);
    // Not its own SKIPPED slice, a range record, nor an older generation's run or live slice.
    expect(isClaimable(slice({ status: 'SKIPPED', generation: 3 }), now, 'm1', 't1', 1, 3)).toBe(false);
    expect(
      isClaimable(
        slice({ status: 'SKIPPED', skipReason: 'misfire', generation: 2, missedUntil: now + 5000, missedCount: 5 }),
        now,
        'm1',
        't1',
        1,
        3,
      ),
    ).toBe(false);
    expect(isClaimable(slice({ status: 'MISSED', generation: 2, missedUntil: now + 5000, missedCount: 5 }), now, 'm1', 't1', 1, 3)).toBe(
      false,
    );
    expect(isClaimable(slice({ status: 'SUCCEEDED', generation: 2 }), now, 'm1', 't1', 1, 3)).toBe(false);
    expect(isClaimable(slice({ generation: 2 }), now, 'm1', 't1', 1, 3)).toBe(false);
    // A newer generation's slice is not this message's to claim, in any state.
    expect(isClaimable(slice({ generation: 4 }), now, 'm1', 't1', 1, 3)).toBe(false);
    expect(isClaimable(slice({ status: 'SKIPPED', generation: 4 }), now, 'm1', 't1', 1, 3)).toBe(false);
    // Its own generation's slice: the usual rules.
    expect(isClaimable(slice({ generation: 3 }), now, 'm1', 't1', 1, 3)).toBe(true);
    expect(isClaimable(slice({ status: 'FAILED', nextAttemptAt: now + 1, generation: 3 }), now, 'm1', 't1', 1, 3)).toBe(false);
  });

  it("a lost claim of an older generation's message on a newer generation's slice drops it as a duplicate", () => {
    const now = clock.now();
    const newer = slice({ generation: 4 });
    expect(lostClaimAction(newer, now, 'm1', 1, 3)).toEqual({ kind: 'drop', reason: 'duplicate' });
    // The same slice, a message of its own generation (or without one): a racing claimer changed it, look again.
    expect(lostClaimAction(newer, now, 'm1', 1, 4)).toEqual({ kind: 'hide', untilMs: now });
    expect(lostClaimAction(newer, now, 'm1', 1)).toEqual({ kind: 'hide', untilMs: now });
    // A newer generation's message on an older generation's live run waits for that run to end.
    const olderRunning = slice({ status: 'RUNNING', generation: 2, leaseExpiresAt: now + 3000, leaseMessageId: 'm0' });
    expect(lostClaimAction(olderRunning, now, undefined, 1, 3)).toEqual({ kind: 'hide', untilMs: now + 3000 + LEASE_EXPIRY_MARGIN_MS });
  });

  it('retries until max attempts, then gives up', () => {
    expect(afterFailure(1, { maxAttempts: 3 })).toBe('retry');
    expect(afterFailure(2, { maxAttempts: 3 })).toBe('retry');
    expect(afterFailure(3, { maxAttempts: 3 })).toBe('dead');
  });

  it('sweeps an enqueued slice after its due time plus grace, a failed one after its retry plus grace', () => {
    const at = { scheduledAt: clock.now() + 60_000, now: clock.now(), graceMs: 30_000 };
    expect(sweepAtFor('ENQUEUED', at)).toBe(at.scheduledAt + 30_000);
    expect(sweepAtFor('FAILED', { ...at, nextAttemptAt: at.now + 5000 })).toBe(at.now + 35_000);
  });

  it('re-sweeps a late slice after the grace at first, then after half its age, so resends grow logarithmically', () => {
    const due = { jobId: 'job', scheduledAt: clock.now() };
    expect(sweepAgainAt(due, due.scheduledAt + 5000, 5000)).toBe(due.scheduledAt + 10_000);
    expect(sweepAgainAt(due, due.scheduledAt + 60_000, 5000)).toBe(due.scheduledAt + 90_000);
    // A slice 10 minutes behind: the resends over those 10 minutes, one per sweep.
    let at = due.scheduledAt + 5000;
    let resends = 0;
    while (at < due.scheduledAt + 600_000) {
      at = sweepAgainAt(due, at, 5000);
      resends++;
    }
    expect(resends).toBeLessThan(15);
    expect(resends).toBeGreaterThan(5);
  });

  it('recognises its own commit only by fence, owner and outcome together', () => {
    const record = { executionKey: 'k', jobId: 'j', scheduledAt: 0, fence: 2, owner: 'w1', committedAt: 0, outcome: 'SUCCEEDED' as const };
    expect(isOwnCommit(record, 2, 'w1', 'SUCCEEDED')).toBe(true);
    expect(isOwnCommit(record, 1, 'w1', 'SUCCEEDED')).toBe(false);
    expect(isOwnCommit(record, 2, 'w2', 'SUCCEEDED')).toBe(false);
    expect(isOwnCommit(undefined, 2, 'w1', 'SUCCEEDED')).toBe(false);
    // A DEAD asked for after a commit that landed is not "my DEAD", and the reverse.
    expect(isOwnCommit(record, 2, 'w1', 'DEAD')).toBe(false);
    expect(isOwnCommit({ ...record, outcome: 'DEAD' }, 2, 'w1', 'SUCCEEDED')).toBe(false);
  });
});

describe('backoff with full jitter', () => {
  const policy = { baseMs: 1000, maxMs: 30_000 };

  it('doubles the ceiling per attempt up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 40].map((attempt) => backoffCeilingMs(attempt, policy))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
  });

  it('stays within [0, ceiling) for the extremes of the random source', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect(retryDelayMs(attempt, policy, () => 0)).toBe(0);
      const high = retryDelayMs(attempt, policy, () => 0.999_999);
      expect(high).toBeLessThan(backoffCeilingMs(attempt, policy));
      expect(high).toBeGreaterThanOrEqual(backoffCeilingMs(attempt, policy) - 1);
    }
  });
});

describe('keys, shards and messages', () => {
  it('execution keys are jobId:ISO-second and parse back', () => {
    const key = executionKey('merchant-settlement', Date.parse('2026-11-29T18:30:00Z'));
    expect(key).toBe('merchant-settlement:2026-11-29T18:30:00Z');
    expect(parseExecutionKey(key)).toEqual({ jobId: 'merchant-settlement', scheduledAt: Date.parse('2026-11-29T18:30:00Z') });
  });

  it('shards are stable and in range', () => {
    expect(shardOf('merchant-settlement', 8)).toBe(shardOf('merchant-settlement', 8));
    const shards = new Set(Array.from({ length: 1000 }, (_, i) => shardOf(`job-${i}`, 8)));
    expect([...shards].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('round-trips a work message and names what is wrong with a bad one', () => {
    const key = { jobId: 'j', scheduledAt: 5000 };
    expect(decodeWorkMessage(encodeWorkMessage(key))).toEqual(key);
    expect(() => decodeWorkMessage('garbage')).toThrow(MalformedMessageError);
    expect(() => decodeWorkMessage('{"v":1,"jobId":"j"}')).toThrowError(/scheduledAt/);
    expect(() => decodeScanMessage('{"v":1,"shard":-1}')).toThrowError(/shard/);
  });

  it("a scanner's work message names its generation and nothing else; an older body's definition (`run`) is read for its generation only", () => {
    const order = { jobId: 'j', scheduledAt: 5000, generation: 3 };
    expect(JSON.parse(encodeWorkMessage(order))).toEqual({ v: 1, ...order });
    expect(decodeWorkMessage(encodeWorkMessage(order))).toEqual(order);
    const run = {
      generation: 3,
      handler: 'h',
      policies: { ...DEFAULT_POLICIES, overlap: 'skip' as const },
      payload: { region: 'eu', n: [1, 2] },
      shard: 5,
    };
    const legacy = (patch: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
      JSON.stringify({ v: 1, jobId: 'j', scheduledAt: 5000, run: { ...run, ...patch }, ...extra });
    // Whatever else an older body says (another handler, a bad shard), only its generation is taken.
    expect(decodeWorkMessage(legacy({ handler: 'other', shard: 1.5, payload: 'x' }))).toEqual(order);
    expect(() => decodeWorkMessage(legacy({ generation: -1 }))).toThrowError(/run\.generation/);
    expect(() => decodeWorkMessage(JSON.stringify({ v: 1, jobId: 'j', scheduledAt: 5000, generation: 1.5 }))).toThrowError(/generation/);
    expect(() => decodeWorkMessage(legacy({}, { generation: 4 }))).toThrowError(/generation: 4 disagrees with run\.generation 3/);
  });

  it('percentiles use the nearest rank', () => {
    const d = distribution(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(d).toEqual({ count: 100, p50: 50, p99: 99, max: 100 });
    expect(distribution([]).count).toBe(0);
  });
});
