/**
 * The reconciler's rule (core/reconcile.ts): which occurrences of a wheel
 * entry need their message again. Pure; the reconciler's I/O is covered by
 * the drills and test/integration/reconcile.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import { reconcileOccurrences } from '../../lib/core/reconcile.ts';
import { LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice } from '../../lib/core/slice.ts';

const T = Date.parse('2026-12-04T12:00:00Z');
const GRACE = 30_000;
const NOW = T + 10 * 60_000;

function slice(at: number, fields: Partial<Slice> = {}): Slice {
  return {
    jobId: 'job',
    scheduledAt: at,
    status: SliceStatus.Succeeded,
    fence: 1,
    attempts: 1,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 3,
    createdAt: at,
    ...fields,
  };
}

describe('reconcileOccurrences', () => {
  it("asks for an ENQUEUED slice where there is none, and nothing where a slice or this generation's range record stands", () => {
    const occurrences = [T, T + 1000, T + 2000, T + 3000];
    const slices = [slice(T), slice(T + 2000, { status: SliceStatus.Missed, missedUntil: T + 3001, missedCount: 2 })];
    expect(reconcileOccurrences(occurrences, 3, slices, NOW, GRACE)).toEqual([{ kind: 'enqueue', scheduledAt: T + 1000 }]);
  });

  it("an older generation's SKIPPED slice, or its range, does not stand for this generation's occurrence", () => {
    const skippedByChange = slice(T, { status: SliceStatus.Skipped, skipReason: 'superseded', generation: 2 });
    const olderRange = slice(T + 1000, { status: SliceStatus.Missed, missedUntil: T + 3000, missedCount: 2, generation: 2 });
    // The range's own item is a final record at its first instant (no generation runs over it, as the claim rules say).
    expect(reconcileOccurrences([T, T + 1000, T + 2000], 3, [skippedByChange, olderRange], NOW, GRACE)).toEqual([
      { kind: 'enqueue', scheduledAt: T },
      { kind: 'enqueue', scheduledAt: T + 2000 },
    ]);
    // An older generation's run, or its live one, is that instant's record: it is not run again.
    expect(reconcileOccurrences([T], 3, [slice(T, { generation: 2 })], NOW, GRACE)).toEqual([]);
  });

  it('a RUNNING slice out of the sweep index whose lease ended beyond the skew margin and the grace goes to the sweep; a live or followed one does not', () => {
    const lapsedAt = NOW - LEASE_EXPIRY_MARGIN_MS - GRACE;
    const abandoned = slice(T, { status: SliceStatus.Running, leaseExpiresAt: lapsedAt - 1 });
    const justLapsed = slice(T + 1000, { status: SliceStatus.Running, leaseExpiresAt: lapsedAt + 1 });
    const followed = slice(T + 2000, { status: SliceStatus.Running, leaseExpiresAt: lapsedAt - 1, sweepAt: NOW });
    const waiting = slice(T + 3000, { status: SliceStatus.Failed, nextAttemptAt: T, sweepAt: T + GRACE });
    expect(reconcileOccurrences([T, T + 1000, T + 2000, T + 3000], 3, [abandoned, justLapsed, followed, waiting], NOW, GRACE)).toEqual([
      { kind: 'sweep', scheduledAt: T },
    ]);
  });
});
