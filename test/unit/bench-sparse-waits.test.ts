import { describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../lib/core/events.ts';
import { SEED_SHARD_SCANS_PER_EXECUTION, SparseWaits } from '../../tools/bench/sparse.ts';

const claimed = (jobId: string, at: number, claimMs: number): LifecycleEvent => ({
  type: 'claimed',
  jobId,
  scheduledAt: '2026-12-06T19:00:00Z',
  executionKey: `${jobId}#2026-12-06T19:00:00Z`,
  fence: 1,
  worker: 'w',
  at: new Date(at).toISOString(),
  claimMs,
});

describe('the sparse run’s waits', () => {
  it('measures handler start minus the message’s processing start (the claimed event’s time minus its claim)', () => {
    const waits = new SparseWaits();
    const t = Date.parse('2026-12-06T18:59:59.200Z');
    waits.onEvent(claimed('sparse-1', t + 40, 40)); // processing started at t
    waits.onEvent(claimed('sparse-2', t + 120, 20)); // at t + 100
    waits.onEvent(claimed('burst-1', t, 10)); // not a sparse job: not counted
    const started = new Map([
      ['sparse-1#2026-12-06T19:00:00Z', t + 800],
      ['sparse-2#2026-12-06T19:00:00Z', t + 850],
      ['sparse-3#2026-12-06T19:00:00Z', t + 900], // no claim seen: no wait
      ['burst-1#2026-12-06T19:00:00Z', t + 900],
    ]);
    expect(waits.waits(started).sort((a, b) => a - b)).toEqual([750, 800]);
    expect(waits.meanClaimMs()).toBe(30);
  });

  it('puts the seed’s deployment at 0.46 shard scans per execution (8 shards, a tick a minute, 25,000 a day)', () => {
    expect(SEED_SHARD_SCANS_PER_EXECUTION).toBeCloseTo(0.4608, 4);
  });
});
