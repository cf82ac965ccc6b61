/**
 * The ChunkStore and OutboxStore contract: a chunk commits once under the
 * fence with its record and outbox items, a zombie's late chunk is refused,
 * the checkpoint lists what committed, and dispatchers take each request
 * once per delivery. Run on the in-memory stores and on DynamoDB (emulator).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chunkInputDigest,
  MAX_ITEMS_PER_CHUNK,
  OUTBOX_SHARDS,
  type ChunkCommitRequest,
  type OutboundRequest,
} from '../../lib/core/chunks.ts';
import { BusinessConditionFailedError, FencedOutError, TooManyWritesError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { BusinessWrite } from '../../lib/core/ports.ts';
import { LEASE_EXPIRY_MARGIN_MS, type SliceKey } from '../../lib/core/slice.ts';
import { CaseSpace, claimed, FAST_POLICIES, type ContractFactory, type ContractInstallation } from './contract-fixture.ts';

export function chunkStoreContract(label: string, factory: ContractFactory): void {
  describe(`ChunkStore and OutboxStore contract: ${label}`, () => {
    let store: ContractInstallation;
    const space = new CaseSpace();
    beforeAll(async () => {
      store = await factory();
    });
    afterAll(() => store?.destroy());

    const put = (id: string): BusinessWrite => ({ put: { tableName: store.businessTable, item: { id, amount: 100 } } });
    const wire = (key: string): OutboundRequest => ({ key, url: 'http://bank.invalid/wires', body: JSON.stringify({ merchant: key }) });
    const chunk = (
      key: SliceKey,
      n: number,
      fence: number,
      owner: string,
      now: number,
      ids: string[],
      wires: string[] = [],
    ): ChunkCommitRequest => ({
      key,
      fence,
      owner,
      now,
      chunk: n,
      writes: ids.map(put),
      outbox: wires.map(wire),
    });
    /** Due requests of the shard `id`'s execution lands on. */
    const dueOf = (s: ContractInstallation, now: number, limit: number) =>
      Promise.all(Array.from({ length: OUTBOX_SHARDS }, (_, shard) => s.outbox.findDue(shard, now, limit))).then((shards) => shards.flat());
    /** The holder's lease ran out and worker-b claimed: fence 2. */
    async function takenOver(key: SliceKey, t: number): Promise<void> {
      const claim = await store.slices.claim(key, 'worker-b', t + FAST_POLICIES.leaseMs + LEASE_EXPIRY_MARGIN_MS + 1);
      if (!claim.won) throw new Error('takeover claim lost');
    }

    it('commits the writes, the chunk record and the outbox items together, and lists the chunk', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('chunk'), t);
      const id = `${key.jobId}-p0`;
      expect(await store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t + 10, [id], [`${key.jobId}-m0`]))).toBe('committed');
      expect(await store.businessItem(id)).toMatchObject({ id, amount: 100 });
      expect(await store.chunks.committedChunks(key)).toEqual([
        { executionKey: executionKey(key.jobId, key.scheduledAt), chunk: 0, fence: 1, owner: 'worker-a', committedAt: t + 10, items: 2 },
      ]);
      const outbox = await store.outbox.list(executionKey(key.jobId, key.scheduledAt));
      expect(outbox).toMatchObject([
        {
          requestKey: `${key.jobId}-m0`,
          idempotencyKey: `${executionKey(key.jobId, key.scheduledAt)}#${key.jobId}-m0`,
          fence: 1,
          chunk: 0,
          status: 'PENDING',
          deliveries: 0,
          dueAt: t + 10,
        },
      ]);
    });

    it('the same chunk sent again by the same claim is its own earlier try: committed, nothing doubled', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('again'), t);
      await store.chunks.commitChunk(chunk(key, 3, 1, 'worker-a', t, [`${key.jobId}-a`]));
      expect(await store.chunks.commitChunk(chunk(key, 3, 1, 'worker-a', t + 5, [`${key.jobId}-a`]))).toBe('committed');
      expect(await store.chunks.committedChunks(key)).toHaveLength(1);
    });

    it('keeps the digest of the input a chunk was committed from on its record, and lists it with the checkpoint', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('input'), t);
      const digest = chunkInputDigest(['m1', 'm2']);
      await store.chunks.commitChunk({ ...chunk(key, 0, 1, 'worker-a', t, [`${key.jobId}-m1`]), inputDigest: digest });
      await store.chunks.commitChunk(chunk(key, 1, 1, 'worker-a', t, [`${key.jobId}-m3`]));
      expect((await store.chunks.committedChunks(key)).map((record) => [record.chunk, record.inputDigest])).toEqual([
        [0, digest],
        [1, undefined],
      ]);
    });

    it("a chunk an earlier claim committed is 'already-committed' to the standby, and its writes are not applied", async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('standby'), t);
      await store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t, [`${key.jobId}-first`]));
      await takenOver(key, t);
      expect(await store.chunks.commitChunk(chunk(key, 0, 2, 'worker-b', t + 9000, [`${key.jobId}-second`]))).toBe('already-committed');
      expect(await store.businessItem(`${key.jobId}-second`)).toBeUndefined();
      expect(await store.chunks.committedChunks(key)).toMatchObject([{ chunk: 0, fence: 1, owner: 'worker-a' }]);
    });

    it("a zombie's late chunk is refused by the fence: no record, no writes, no outbox item", async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('zombie'), t);
      await takenOver(key, t);
      await expect(
        store.chunks.commitChunk(chunk(key, 1, 1, 'worker-a', t + 9000, [`${key.jobId}-late`], [`${key.jobId}-w`])),
      ).rejects.toBeInstanceOf(FencedOutError);
      expect(await store.businessItem(`${key.jobId}-late`)).toBeUndefined();
      expect(await store.chunks.committedChunks(key)).toEqual([]);
      expect(await store.outbox.list(executionKey(key.jobId, key.scheduledAt))).toEqual([]);
      expect(await store.chunks.commitChunk(chunk(key, 1, 2, 'worker-b', t + 9001, [`${key.jobId}-late`]))).toBe('committed');
    });

    it('no chunk commits after the slice is final', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('final'), t);
      await store.slices.commit({ key, fence: 1, owner: 'worker-a' }, t + 10, []);
      await expect(store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t + 20, [`${key.jobId}-after`]))).rejects.toBeInstanceOf(
        FencedOutError,
      );
      expect(await store.businessItem(`${key.jobId}-after`)).toBeUndefined();
    });

    it('an outbound request key another chunk used refuses the whole chunk', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('dup-wire'), t);
      await store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t, [`${key.jobId}-x`], ['m-1']));
      const refused = store.chunks.commitChunk(chunk(key, 1, 1, 'worker-a', t, [`${key.jobId}-y`], ['m-2', 'm-1']));
      await expect(refused).rejects.toBeInstanceOf(BusinessConditionFailedError);
      await expect(refused).rejects.toMatchObject({ writeIndex: 2 });
      expect(await store.businessItem(`${key.jobId}-y`)).toBeUndefined();
      expect(await store.chunks.committedChunks(key)).toHaveLength(1);
    });

    it(`refuses more than ${MAX_ITEMS_PER_CHUNK} writes and requests in one chunk before writing`, async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('too-many'), t);
      const ids = Array.from({ length: 50 }, (_, i) => `${key.jobId}-${i}`);
      await expect(
        store.chunks.commitChunk(
          chunk(
            key,
            0,
            1,
            'worker-a',
            t,
            ids,
            ids.map((id) => `w${id}`),
          ),
        ),
      ).rejects.toBeInstanceOf(TooManyWritesError);
      expect(await store.chunks.committedChunks(key)).toEqual([]);
    });

    it('outbox: one dispatcher takes a due request; the record of a stale take is ignored; delivered leaves the due set', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('outbox'), t);
      const id = executionKey(key.jobId, key.scheduledAt);
      await store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t, [], ['m-1']));
      const [pending] = (await dueOf(store, t, 10_000)).filter((item) => item.executionKey === id);
      expect(pending).toBeDefined();
      const [first, second] = await Promise.all([store.outbox.take(pending!, t, t + 5000), store.outbox.take(pending!, t, t + 5000)]);
      expect([first, second].filter((taken) => taken !== undefined)).toHaveLength(1);
      const taken = (first ?? second)!;
      expect(taken).toMatchObject({ deliveries: 1, dueAt: t + 5000 });
      expect((await dueOf(store, t + 4999, 10_000)).filter((item) => item.executionKey === id)).toEqual([]);
      await store.outbox.record(taken, { kind: 'retry', now: t + 100, error: 'HTTP 503', statusCode: 503, dueAt: t + 300 });
      const [again] = (await dueOf(store, t + 300, 10_000)).filter((item) => item.executionKey === id);
      expect(again).toMatchObject({ deliveries: 1, dueAt: t + 300, lastStatusCode: 503, lastError: 'HTTP 503' });
      const retaken = await store.outbox.take(again!, t + 300, t + 5300);
      await store.outbox.record(taken, { kind: 'delivered', now: t + 400, statusCode: 200 });
      expect(await store.outbox.list(id)).toMatchObject([{ status: 'PENDING', deliveries: 2 }]);
      await store.outbox.record(retaken!, { kind: 'delivered', now: t + 500, statusCode: 201 });
      expect(await store.outbox.list(id)).toMatchObject([
        { status: 'DELIVERED', deliveries: 2, deliveredAt: t + 500, lastStatusCode: 201 },
      ]);
      expect((await dueOf(store, t + 100_000, 10_000)).filter((item) => item.executionKey === id)).toEqual([]);
    });

    it('outbox: a dead request leaves the due set with its last error', async () => {
      const t = space.instant();
      const { key } = await claimed(store, space.jobId('outbox-dead'), t);
      const id = executionKey(key.jobId, key.scheduledAt);
      await store.chunks.commitChunk(chunk(key, 0, 1, 'worker-a', t, [], ['m-1']));
      const [pending] = (await dueOf(store, t, 10_000)).filter((item) => item.executionKey === id);
      const taken = await store.outbox.take(pending!, t, t + 5000);
      await store.outbox.record(taken!, { kind: 'dead', now: t + 100, error: 'HTTP 400', statusCode: 400 });
      expect(await store.outbox.list(id)).toMatchObject([{ status: 'DEAD', lastError: 'HTTP 400', lastStatusCode: 400 }]);
      expect((await dueOf(store, t + 100_000, 10_000)).filter((item) => item.executionKey === id)).toEqual([]);
    });
  });
}
