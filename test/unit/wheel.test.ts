/**
 * The timing wheel's pure rules (core/wheel.ts): which bucket an instant is
 * in, how far a scan takes buckets up and how far it reconciles them, and the
 * dedupe of entries a redone or racing scan wrote twice.
 */
import { describe, expect, it } from 'vitest';
import {
  bucketOf,
  distinctEntries,
  freshCursor,
  reconcileHorizon,
  scanHorizon,
  WHEEL_BUCKET_MS,
  type PlacedEntry,
} from '../../lib/core/wheel.ts';

// A bucket boundary (epoch ms divisible by 5000).
const T = Date.parse('2026-12-04T12:00:00Z');
const GRACE = 30_000;

describe('buckets', () => {
  it('an instant is in the 5 s bucket that starts at or before it', () => {
    expect(T % WHEEL_BUCKET_MS).toBe(0);
    expect(bucketOf(T)).toBe(T);
    expect(bucketOf(T + 1)).toBe(T);
    expect(bucketOf(T + 4999)).toBe(T);
    expect(bucketOf(T + 5000)).toBe(T + 5000);
    expect(bucketOf(T - 1)).toBe(T - 5000);
  });

  it('a scan takes up the buckets before the one its lookahead ends in: an occurrence in that bucket waits for the next scan', () => {
    expect(scanHorizon(T + 3000, 120_000)).toBe(T + 120_000);
    expect(scanHorizon(T, 120_000)).toBe(T + 120_000);
    expect(scanHorizon(T + 4999, 10_000)).toBe(T + 10_000);
  });

  it("a shard's first cursor starts both ranges at the current bucket", () => {
    expect(freshCursor(T + 2500)).toEqual({ scannedThrough: T, reconciledThrough: T });
  });
});

describe('reconcile horizon', () => {
  /** Is bucket `bucket` in the range a scan at `now` reconciles? */
  const reconciled = (bucket: number, now: number): boolean => bucket < reconcileHorizon(now, GRACE);

  it('a bucket is reconciled only once its last possible start (bucket + 4999 ms) is more than the grace overdue', () => {
    expect(reconciled(T, T + WHEEL_BUCKET_MS + GRACE - 1)).toBe(false);
    expect(reconciled(T, T + WHEEL_BUCKET_MS + GRACE)).toBe(true);
    // The first start alone being overdue is not enough.
    expect(reconciled(T, T + GRACE + 1)).toBe(false);
  });

  it('for any instant: a bucket is in range exactly when every start in it is a grace overdue', () => {
    for (let now = T; now < T + 3 * WHEEL_BUCKET_MS + GRACE; now += 250) {
      for (let bucket = T - WHEEL_BUCKET_MS; bucket < T + 2 * WHEEL_BUCKET_MS; bucket += WHEEL_BUCKET_MS) {
        const everyStartOverdue = bucket + WHEEL_BUCKET_MS - 1 + GRACE < now;
        expect(reconciled(bucket, now), `bucket ${bucket - T} at ${now - T}`).toBe(everyStartOverdue);
      }
    }
  });
});

describe('distinctEntries', () => {
  const entry = (jobId: string, generation: number, from: number, bucket = T): PlacedEntry => ({ jobId, generation, from, bucket });

  it('keeps one entry per job, generation and bucket: the earliest `from`', () => {
    const kept = distinctEntries([entry('a', 1, T + 2000), entry('a', 1, T + 1000), entry('a', 1, T + 1000), entry('b', 1, T)]);
    expect(kept).toEqual([entry('a', 1, T + 1000), entry('b', 1, T)]);
  });

  it('another generation or another bucket is another entry', () => {
    const entries = [entry('a', 1, T), entry('a', 2, T + 1000), entry('a', 1, T + 5000, T + 5000)];
    expect(distinctEntries(entries)).toEqual(entries);
  });

  it("keeps the caller's own fields on the entries it keeps", () => {
    const tagged = [
      { ...entry('a', 1, T + 1000), tag: 'x' },
      { ...entry('a', 1, T), tag: 'y' },
    ];
    expect(distinctEntries(tagged)).toEqual([{ ...entry('a', 1, T), tag: 'y' }]);
  });
});
