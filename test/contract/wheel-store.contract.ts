/**
 * The WheelStore contract (core/ports.ts, lib/aws/dynamo/wheel-store.ts) and
 * the JobReader's: what a scanner and the reconciler read and write instead
 * of the job. Each case has its own wheel shard (CaseSpace.wheelShard), so
 * the inbox entries job changes put in shard 0 never meet it. Run against
 * both stores by memory.contract.test.ts and dynamo.contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WHEEL_BUCKET_MS, type PlacedEntry } from '../../lib/core/wheel.ts';
import { CaseSpace, jobSpec, type ContractFactory, type ContractInstallation } from './contract-fixture.ts';

export function wheelStoreContract(label: string, factory: ContractFactory): void {
  describe(`WheelStore and JobReader contract: ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());
    const byJob = (a: { jobId: string }, b: { jobId: string }) => a.jobId.localeCompare(b.jobId);

    describe('cursor', () => {
      it('is absent before the first scan; moveCursor creates it as given', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        expect(await store.wheel.readCursor(shard)).toBeUndefined();
        // With no claim yet, the claim is where it has scanned to; the write returns what it wrote.
        const cursor = { scannedThrough: t, reconciledThrough: t - WHEEL_BUCKET_MS, claimedThrough: t };
        expect(await store.wheel.moveCursor(shard, { scannedThrough: t, reconciledThrough: t - WHEEL_BUCKET_MS })).toEqual(cursor);
        expect(await store.wheel.readCursor(shard)).toEqual(cursor);
        expect(await store.wheel.readCursor(space.wheelShard())).toBeUndefined();
      });

      it('claim: only raises claimedThrough, returns the cursor with it, and is no cursor by itself', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        // A shard's first scan claims before it has moved the cursor.
        expect(await store.wheel.claim(shard, t + 20_000)).toBeUndefined();
        expect(await store.wheel.readCursor(shard)).toBeUndefined();
        expect(await store.wheel.moveCursor(shard, { scannedThrough: t, reconciledThrough: t })).toEqual({
          scannedThrough: t,
          reconciledThrough: t,
          claimedThrough: t + 20_000,
        });
        // A scan behind (a smaller horizon) leaves the claim where it is and reads it.
        expect(await store.wheel.claim(shard, t + 15_000)).toEqual({ scannedThrough: t, reconciledThrough: t, claimedThrough: t + 20_000 });
        expect(await store.wheel.claim(shard, t + 25_000)).toEqual({ scannedThrough: t, reconciledThrough: t, claimedThrough: t + 25_000 });
        expect(await store.wheel.moveCursor(shard, { scannedThrough: t + 25_000, reconciledThrough: t + 5000 })).toEqual({
          scannedThrough: t + 25_000,
          reconciledThrough: t + 5000,
          claimedThrough: t + 25_000,
        });
        // Racing claims leave the largest.
        await Promise.all([
          store.wheel.claim(shard, t + 40_000),
          store.wheel.claim(shard, t + 30_000),
          store.wheel.claim(shard, t + 35_000),
        ]);
        expect(await store.wheel.readCursor(shard)).toMatchObject({ claimedThrough: t + 40_000 });
      });

      it('never moves a field back: each becomes the larger of its value and the one given', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        await store.wheel.moveCursor(shard, { scannedThrough: t, reconciledThrough: t });
        // A scan that read an older cursor: one field behind, the other ahead.
        await store.wheel.moveCursor(shard, { scannedThrough: t - 10_000, reconciledThrough: t + 5000 });
        expect(await store.wheel.readCursor(shard)).toMatchObject({ scannedThrough: t, reconciledThrough: t + 5000 });
        // The write returns the cursor as it stands, not as it was given.
        expect(await store.wheel.moveCursor(shard, { scannedThrough: t - 20_000, reconciledThrough: t - 20_000 })).toMatchObject({
          scannedThrough: t,
          reconciledThrough: t + 5000,
        });
        expect(await store.wheel.readCursor(shard)).toMatchObject({ scannedThrough: t, reconciledThrough: t + 5000 });
        await store.wheel.moveCursor(shard, { scannedThrough: t + 15_000, reconciledThrough: t + 10_000 });
        expect(await store.wheel.readCursor(shard)).toMatchObject({ scannedThrough: t + 15_000, reconciledThrough: t + 10_000 });
      });

      it('two racing moves, each ahead in one field, leave the larger of each', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        await store.wheel.moveCursor(shard, { scannedThrough: t, reconciledThrough: t });
        await Promise.all([
          store.wheel.moveCursor(shard, { scannedThrough: t + 20_000, reconciledThrough: t + 5000 }),
          store.wheel.moveCursor(shard, { scannedThrough: t + 10_000, reconciledThrough: t + 15_000 }),
        ]);
        expect(await store.wheel.readCursor(shard)).toMatchObject({ scannedThrough: t + 20_000, reconciledThrough: t + 15_000 });
      });
    });

    describe('entries', () => {
      it('nextBucket: the first bucket in [from, to) that holds an entry; the inbox and the cursor are not buckets', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        const b = (n: number) => t + n * WHEEL_BUCKET_MS;
        await store.wheel.putInbox(shard, { jobId: 'inboxed', generation: 1, from: b(0) });
        await store.wheel.moveCursor(shard, { scannedThrough: b(0), reconciledThrough: b(0) });
        expect(await store.wheel.nextBucket(shard, 0, Number.MAX_SAFE_INTEGER)).toBeUndefined();
        await store.wheel.place(
          shard,
          [
            { jobId: 'a', generation: 1, from: b(2), bucket: b(2) },
            { jobId: 'b', generation: 1, from: b(5) + 1000, bucket: b(5) },
          ],
          t,
        );
        await store.wheel.place(space.wheelShard(), [{ jobId: 'elsewhere', generation: 1, from: b(1), bucket: b(1) }], t);
        expect(await store.wheel.nextBucket(shard, 0, Number.MAX_SAFE_INTEGER)).toBe(b(2));
        expect(await store.wheel.nextBucket(shard, b(0), b(2))).toBeUndefined();
        expect(await store.wheel.nextBucket(shard, b(0), b(2) + 1)).toBe(b(2));
        expect(await store.wheel.nextBucket(shard, b(2), b(10))).toBe(b(2));
        // A start inside a bucket is past that bucket's start: the bucket is behind it.
        expect(await store.wheel.nextBucket(shard, b(2) + 1, b(10))).toBe(b(5));
        expect(await store.wheel.nextBucket(shard, b(3), b(5))).toBeUndefined();
        expect(await store.wheel.nextBucket(shard, b(6), Number.MAX_SAFE_INTEGER)).toBeUndefined();
        expect(await store.wheel.nextBucket(shard, b(5), b(5))).toBeUndefined();
      });

      it('entriesAt: every placed entry of that bucket, however many packs they took; none of another bucket or shard', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        const bucket = t + 3 * WHEEL_BUCKET_MS;
        // Long ids: a pack holds about 900 bytes of entries, so these take more than ten packs.
        const many: PlacedEntry[] = Array.from({ length: 100 }, (_, i) => ({
          jobId: `job-with-a-rather-long-identifier-as-users-write-them-${String(i).padStart(3, '0')}-${'x'.repeat(40)}`,
          generation: 1 + (i % 3),
          from: bucket + (i % 5) * 1000,
          bucket,
        }));
        const neighbour: PlacedEntry = {
          jobId: 'next-bucket',
          generation: 1,
          from: bucket + WHEEL_BUCKET_MS,
          bucket: bucket + WHEEL_BUCKET_MS,
        };
        await store.wheel.place(shard, [...many, neighbour], t);
        await store.wheel.place(space.wheelShard(), [{ ...many[0]!, jobId: 'other-shard' }], t);
        await store.wheel.putInbox(shard, { jobId: 'inboxed', generation: 1, from: bucket });
        const found = await store.wheel.entriesAt(shard, bucket);
        expect(found).toHaveLength(100);
        expect([...found].sort(byJob)).toEqual([...many].sort(byJob));
        expect(await store.wheel.entriesAt(shard, bucket + WHEEL_BUCKET_MS)).toEqual([neighbour]);
        expect(await store.wheel.entriesAt(shard, bucket - WHEEL_BUCKET_MS)).toEqual([]);
      });

      it('place only adds: an entry placed again (a redone scan) is there twice, and the earlier ones stay', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        const entry: PlacedEntry = { jobId: 'again', generation: 4, from: t, bucket: t };
        const other: PlacedEntry = { jobId: 'other', generation: 1, from: t + 1000, bucket: t };
        await store.wheel.place(shard, [entry], t - 60_000);
        await store.wheel.place(shard, [entry, other], t - 30_000);
        expect([...(await store.wheel.entriesAt(shard, t))].sort(byJob)).toEqual([entry, entry, other].sort(byJob));
      });
    });

    describe('inbox', () => {
      it('putInbox never replaces a newer generation of the job; a newer one replaces an older', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        await store.wheel.putInbox(shard, { jobId: 'job', generation: 2, from: t });
        await store.wheel.putInbox(shard, { jobId: 'job', generation: 1, from: t - 5000 });
        await store.wheel.putInbox(shard, { jobId: 'other', generation: 7, from: t + 1000 });
        expect([...(await store.wheel.inbox(shard))].sort(byJob)).toEqual([
          { jobId: 'job', generation: 2, from: t },
          { jobId: 'other', generation: 7, from: t + 1000 },
        ]);
        await store.wheel.putInbox(shard, { jobId: 'job', generation: 3, from: t + 9000 });
        expect([...(await store.wheel.inbox(shard))].sort(byJob)).toEqual([
          { jobId: 'job', generation: 3, from: t + 9000 },
          { jobId: 'other', generation: 7, from: t + 1000 },
        ]);
        expect(await store.wheel.inbox(space.wheelShard())).toEqual([]);
      });

      it('takeFromInbox removes only the generation taken up: a newer one put meanwhile stays', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        await store.wheel.putInbox(shard, { jobId: 'job', generation: 1, from: t });
        await store.wheel.putInbox(shard, { jobId: 'job', generation: 2, from: t + 1000 });
        await store.wheel.takeFromInbox(shard, { jobId: 'job', generation: 1, from: t });
        expect(await store.wheel.inbox(shard)).toEqual([{ jobId: 'job', generation: 2, from: t + 1000 }]);
        await store.wheel.takeFromInbox(shard, { jobId: 'job', generation: 3, from: t + 2000 });
        expect(await store.wheel.inbox(shard)).toEqual([{ jobId: 'job', generation: 2, from: t + 1000 }]);
        await store.wheel.takeFromInbox(shard, { jobId: 'job', generation: 2, from: t + 1000 });
        expect(await store.wheel.inbox(shard)).toEqual([]);
        // Taking up what is no longer there (another scan took it) is nothing to do.
        await expect(store.wheel.takeFromInbox(shard, { jobId: 'job', generation: 2, from: t + 1000 })).resolves.toBeUndefined();
      });

      it("a job change puts its new generation in its shard's inbox, from its first occurrence", async () => {
        const id = space.jobId('inbox-put');
        const first = await store.putJob(jobSpec(id));
        const inboxOf = async () => (await store.wheel.inbox(first.shard)).filter((entry) => entry.jobId === id);
        expect(await inboxOf()).toEqual([{ jobId: id, generation: first.generation, from: first.nextFireAt }]);
        const second = await store.putJob(jobSpec(id, { v: 2 }));
        expect(await inboxOf()).toEqual([{ jobId: id, generation: second.generation, from: second.nextFireAt }]);
      });
    });

    describe('set aside', () => {
      it('keeps one record per job, replaced by a newer generation, never by an older one; apart from the inbox and the buckets', async () => {
        const shard = space.wheelShard();
        const t = space.instant();
        const record = (jobId: string, generation: number, reason: string) => ({
          jobId,
          generation,
          reason,
          from: t,
          at: t + 1,
          by: 'scanner-a',
        });
        expect(await store.wheel.setAsideJobs(shard)).toEqual([]);
        await store.wheel.setAside(shard, record('a', 2, 'invalid schedule "x"'));
        await store.wheel.setAside(shard, record('b', 1, 'holds U+FFFF'));
        await store.wheel.setAside(shard, record('a', 1, 'an older scan'));
        expect((await store.wheel.setAsideJobs(shard)).sort(byJob)).toEqual([
          record('a', 2, 'invalid schedule "x"'),
          record('b', 1, 'holds U+FFFF'),
        ]);
        await store.wheel.setAside(shard, record('a', 3, 'invalid timeZone'));
        expect((await store.wheel.setAsideJobs(shard)).find((found) => found.jobId === 'a')).toEqual(record('a', 3, 'invalid timeZone'));
        expect(await store.wheel.setAsideJobs(space.wheelShard())).toEqual([]);
        expect(await store.wheel.inbox(shard)).toEqual([]);
        expect(await store.wheel.nextBucket(shard, 0, t + 3_600_000)).toBeUndefined();
      });
    });

    describe('JobReader', () => {
      it('reads one record, many, and those of a shard; a deleted job reads as its tombstone', async () => {
        const id = space.jobId('reader');
        const other = space.jobId('reader-other');
        const job = await store.putJob(jobSpec(id, { v: 1 }));
        await store.putJob(jobSpec(other));
        expect(await store.jobReader.record(id)).toEqual(job);
        expect(await store.jobReader.record(space.jobId('never-put'))).toBeUndefined();
        for (const consistent of [true, false]) {
          const records = await store.jobReader.records([id, other, 'no-such-job'], consistent);
          expect([...records.keys()].sort()).toEqual([id, other].sort());
          expect(records.get(id)).toEqual(job);
        }
        expect((await store.jobReader.recordsOfShard(job.shard)).filter((record) => record.id === id)).toEqual([job]);
        expect((await store.jobReader.recordsOfShard(job.shard + 1)).filter((record) => record.id === id)).toEqual([]);

        const paused = await store.pauseJob(id);
        expect(await store.jobReader.record(id)).toMatchObject({
          enabled: false,
          generation: job.generation + 1,
          version: job.version + 1,
        });
        expect(await store.deleteJob(id)).toBe(true);
        expect(await store.jobReader.record(id)).toMatchObject({
          id,
          deleted: true,
          generation: paused.generation + 1,
          changeReason: 'deleted',
        });
        expect(await store.storedJob(id)).toBeUndefined();
        expect((await store.jobReader.records([id], true)).get(id)).toMatchObject({ deleted: true });
      });
    });
  });
}
