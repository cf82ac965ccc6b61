/**
 * The timing wheel: how a scanner finds the jobs due in the next seconds
 * without writing to any job. Pure: the buckets, the entries and the cursor's
 * rules; lib/aws/dynamo/wheel-store.ts keeps them in the `wheel` table.
 *
 * A wheel entry says "job J, generation g, is due again from its occurrence
 * `from`". It sits in the bucket of that occurrence's start (its second plus
 * the job's jitter offset), in its shard's partition, and is never updated:
 * a scan that takes a bucket up sends every occurrence the entry's job has
 * in that bucket and writes the job's next entry, in the bucket of its next
 * occurrence, packed with the other jobs going to that bucket (one write for
 * many jobs). Entries expire by TTL (free), long after the reconciler has
 * read them again.
 *
 *   shard partition:  !inbox#<job>   <bucket>#<tag> ... <bucket>#<tag>   ~cursor
 *                     new generations  wheel entries, by bucket          scan + reconcile progress
 *
 * - An entry in bucket b covers its job's occurrences in [from, b + BUCKET)
 *   whose start falls in b: the reconciler re-reads b later and checks each
 *   of them has a slice (core/reconcile.ts).
 * - A lifecycle change (put, pause, resume, delete) writes no wheel entry: it
 *   puts its new generation in the shard's inbox, which every scan reads, so
 *   a change never lands in a bucket a scan has already passed. Entries of an
 *   older generation are ignored wherever they are (the job's generation moved on).
 * - The cursor: every bucket before `scannedThrough` has been taken up, every
 *   bucket before `reconciledThrough` reconciled. Both only grow. A scan
 *   moves them after its work, so a scanner that dies leaves its range to the
 *   next scan (duplicate sends, never a gap).
 * - The claim: a scan raises `claimedThrough` to its horizon before it reads
 *   a bucket, and reads it again, with its cursor move, after its work. Scans
 *   of one shard race (a scan message delivered twice, a slow scan overlapped
 *   by the next tick's, clocks skewed apart). A job's next entry that a scan
 *   behind places is a copy of one the scan ahead placed itself, unless the
 *   scan behind took that generation up from the inbox after the scan ahead
 *   had read the inbox: then its entry is the only one, and it may land in a
 *   bucket the scan ahead has already read: the job would never be sent
 *   again. So a scan removes an inbox entry only when the claim
 *   it reads after its work is behind every entry it placed for that
 *   generation in buckets it did not read itself (`overtakenEntries`);
 *   otherwise the next scan takes the generation up again (copies, never a
 *   gap). A claim after the placement reads the bucket with the entry in it;
 *   a claim before it is seen.
 */

/** Width of a wheel bucket: a scan takes up whole buckets, so this is how far a lookahead is rounded down. */
export const WHEEL_BUCKET_MS = 5000;

/** How long a wheel entry outlives its bucket (DynamoDB TTL); the reconciler reads it well before. */
export const WHEEL_ENTRY_TTL_MS = 2 * 86_400_000;

export interface WheelEntry {
  readonly jobId: string;
  readonly generation: number;
  /** The job's first occurrence (scheduled second) this entry stands for. */
  readonly from: number;
}

/** A wheel entry with the bucket it sits in. */
export interface PlacedEntry extends WheelEntry {
  readonly bucket: number;
  /**
   * When its occurrences were sent, for an entry placed in a bucket the scans
   * had passed (a new generation's first occurrences, taken up from the inbox
   * after they were due): the reconciler gives their messages the grace from
   * then, not from their second.
   */
  readonly sentAt?: number;
}

/**
 * Where the entry of occurrences sent late (at `now`, from an inbox) goes:
 * their own bucket, or the current one if that is later. A reconciler may
 * have passed a bucket before the current one (a shard's first scan starts
 * its cursor at the current bucket; an earlier scan that failed to take up
 * the inbox still reconciled); none passes the current bucket for a grace
 * yet, and its entry covers every occurrence from its `from` on.
 */
export function lateEntryBucket(bucket: number, now: number): number {
  return Math.max(bucket, bucketOf(now));
}

/** May the reconciler judge this entry's occurrences at `now`: sent (when late) at least `graceMs` ago. */
export function isReconcilable(entry: Pick<PlacedEntry, 'sentAt'>, now: number, graceMs: number): boolean {
  return entry.sentAt === undefined || entry.sentAt + graceMs <= now;
}

export interface ScanCursor {
  /** Every bucket before this one has been taken up by a scan. */
  readonly scannedThrough: number;
  /** Every bucket before this one has been reconciled. */
  readonly reconciledThrough: number;
}

/** The cursor as stored: with the claim, never below `scannedThrough`. */
export interface ShardCursor extends ScanCursor {
  /** Every bucket before this one is being or has been read by a scan (its horizon, raised before its first read). */
  readonly claimedThrough: number;
}

/** The bucket an instant falls in: its start. */
export function bucketOf(instant: number): number {
  return Math.floor(instant / WHEEL_BUCKET_MS) * WHEEL_BUCKET_MS;
}

/** The first bucket a scan at `now` with `lookaheadMs` does not take up yet (exclusive end of its range). */
export function scanHorizon(now: number, lookaheadMs: number): number {
  return bucketOf(now + lookaheadMs);
}

/**
 * The first bucket a scan at `now` does not reconcile yet: a bucket is
 * reconciled once every occurrence starting in it is `graceMs` overdue, so a
 * slice is only missing when its message had time to be claimed.
 */
export function reconcileHorizon(now: number, graceMs: number): number {
  // Bucket b qualifies when b + BUCKET <= now - grace; the first that does not is the bucket of now - grace.
  return bucketOf(now - graceMs);
}

/** The cursor of a shard no scan has seen: both ranges start at the current bucket (earlier work is in the inbox). */
export function freshCursor(now: number): ScanCursor {
  return { scannedThrough: bucketOf(now), reconciledThrough: bucketOf(now) };
}

/**
 * The entries a scan placed that another scan may have read past: those in
 * buckets it did not read itself (from `readThrough` on) that were claimed
 * (`claimedThrough`) by the time it read the claim after placing them.
 */
export function overtakenEntries<T extends PlacedEntry>(placed: readonly T[], readThrough: number, claimedThrough: number): T[] {
  return placed.filter((entry) => entry.sentAt === undefined && entry.bucket >= readThrough && entry.bucket < claimedThrough);
}

/**
 * One entry per job, generation and bucket, the earliest `from` kept: a scan
 * that was redone, or two scanners racing one range, may have written the
 * same next entry twice, in different packs.
 */
export function distinctEntries<T extends PlacedEntry>(entries: readonly T[]): T[] {
  const kept = new Map<string, T>();
  for (const entry of entries) {
    const key = `${entry.bucket}\u0000${entry.jobId}\u0000${entry.generation}`;
    const seen = kept.get(key);
    if (seen === undefined || entry.from < seen.from) kept.set(key, entry);
  }
  return [...kept.values()];
}
