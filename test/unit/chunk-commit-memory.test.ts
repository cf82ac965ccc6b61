/**
 * Chunked commits through the real Worker over the in-memory stores: a
 * standby resumes at the checkpoint without redoing a committed chunk, a
 * zombie's late chunk is refused, and the final commit waits for every chunk.
 */
import { describe, expect, it } from 'vitest';
import type { ChunkCommitOutcome, ChunkCommitRequest } from '../../lib/core/chunks.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { FencedOutError, InvalidChunkError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { InMemoryChunkStore } from '../../lib/memory/index.ts';
import { reportingChunks } from '../../tools/chaos/settlement-chunks.ts';
import { createMemoryEngine, gate } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-09-01T00:30:00Z');
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };
const payout = (id: string) => ({ put: { tableName: 'payouts', item: { id } } });

describe('ctx.commitChunk over the in-memory stores', () => {
  it('commits each chunk with its writes and record; the slice succeeds only with the final commit', async () => {
    const engine = createMemoryEngine(new ManualClock(T0), { businessTables: { payouts: ['id'] } });
    const outcomes: string[] = [];
    const job = await engine.register({ id: 'batch', policies: FAST }, async (ctx) => {
      for (let n = 0; n < 3; n++) outcomes.push(await ctx.commitChunk(n, { writes: [payout(`p${n}a`), payout(`p${n}b`)] }));
      expect(await engine.slices.get({ jobId: ctx.jobId, scheduledAt: ctx.scheduledAt.getTime() })).toMatchObject({ status: 'RUNNING' });
      expect([...(await ctx.committedChunks())]).toEqual([0, 1, 2]);
    });
    const key = await engine.enqueue(job, T0);
    await engine.drain(engine.worker('w'));
    expect(outcomes).toEqual(['committed', 'committed', 'committed']);
    expect(
      engine.tables
        .businessItems('payouts')
        .map((item) => item.id)
        .sort(),
    ).toEqual(['p0a', 'p0b', 'p1a', 'p1b', 'p2a', 'p2b']);
    expect(await engine.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', fence: 1 });
    expect(await engine.chunks.committedChunks(key)).toMatchObject([{ chunk: 0, items: 2 }, { chunk: 1 }, { chunk: 2 }]);
  });

  it('a standby resumes at the first uncommitted chunk, runs no committed chunk again, and the zombie’s late chunk is refused', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock, { businessTables: { payouts: ['id'] } });
    const worked: string[] = [];
    const seen: string[] = [];
    const job = await engine.register({ id: 'resume', policies: FAST }, async (ctx) => {
      for (let n = 0; n < 5; n++) {
        await ctx.commitChunk(n, () => {
          worked.push(`${ctx.worker}:${n}`);
          return { writes: [payout(`m${n}`)] };
        });
      }
    });
    const key = await engine.enqueue(job, T0);
    // The holder's chunk 2 hangs in its store (a pause mid-batch) and its renewals stop.
    const release = gate();
    const late: { outcome?: ChunkCommitOutcome; error?: unknown } = {};
    const pausedChunks = Object.assign(Object.create(engine.chunks) as InMemoryChunkStore, {
      commitChunk: async (request: ChunkCommitRequest) => {
        if (request.chunk < 2) return engine.chunks.commitChunk(request);
        await release.opened;
        return engine.chunks.commitChunk(request).then(
          (outcome) => (late.outcome = outcome),
          (error: unknown) => {
            late.error = error;
            throw error;
          },
        );
      },
    });
    const silent = Object.assign(Object.create(engine.slices) as typeof engine.slices, { renew: () => new Promise<void>(() => {}) });
    const [original] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('holder', { slices: silent, chunks: pausedChunks }), original!);
    await engine.nextEvent((event) => event.type === 'fenced_out' && event.worker === 'holder');
    clock.advance(1000);
    // The outcomes as the drill reads them, at the standby's ports.
    const reported = reportingChunks({ slices: engine.slices, chunks: engine.chunks }, (c) =>
      seen.push(`${c.fence}:${c.chunk}:${c.outcome}`),
    );
    await engine.drain(engine.worker('standby', reported));
    release.open();
    expect(await holder).toBe('keep');
    await until(() => late.error !== undefined || late.outcome !== undefined);
    expect(late.error).toBeInstanceOf(FencedOutError);
    expect(worked).toEqual(['holder:0', 'holder:1', 'holder:2', 'standby:2', 'standby:3', 'standby:4']);
    expect(seen).toEqual(['2:0:already-committed', '2:1:already-committed', '2:2:committed', '2:3:committed', '2:4:committed']);
    expect((await engine.chunks.committedChunks(key)).map((record) => `${record.chunk}@${record.fence}`)).toEqual([
      '0@1',
      '1@1',
      '2@2',
      '3@2',
      '4@2',
    ]);
    expect(await engine.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', fence: 2, owner: 'standby' });
  });

  it('the final commit waits for a chunk in flight, and fails the attempt when a chunk failed', async () => {
    const engine = createMemoryEngine(new ManualClock(T0), { businessTables: { payouts: ['id'] } });
    const order: string[] = [];
    const slowChunks = Object.assign(Object.create(engine.chunks) as InMemoryChunkStore, {
      commitChunk: async (request: ChunkCommitRequest) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        order.push(`chunk ${request.chunk}`);
        return engine.chunks.commitChunk(request);
      },
    });
    const wire = (key: string) => ({ key, url: 'http://bank.invalid/wires', body: '{}' });
    const job = await engine.register({ id: 'wait', policies: FAST }, async (ctx) => {
      void ctx.commitChunk(0, { writes: [payout('a')], outbox: [wire('m1')] });
      if (ctx.attempt === 1) void ctx.commitChunk(1, { outbox: [wire('m1')] }).catch(() => order.push('chunk 1 refused'));
      await ctx.commit([]);
      order.push('final');
    });
    const key = await engine.enqueue(job, T0);
    await engine.drain(engine.worker('w', { chunks: slowChunks }));
    expect(order).toEqual(['chunk 0', 'chunk 1', 'chunk 1 refused']);
    expect(await engine.slices.get(key)).toMatchObject({
      status: 'FAILED',
      lastError: expect.stringContaining('BusinessConditionFailedError'),
    });
    expect(engine.tables.businessItems('payouts')).toEqual([{ id: 'a' }]);
  });

  it('refuses a bad chunk number and a bad request key without writing, and then the final commit too', async () => {
    const engine = createMemoryEngine(new ManualClock(T0), { businessTables: { payouts: ['id'] } });
    const errors: unknown[] = [];
    const job = await engine.register({ id: 'refuse', policies: { ...FAST, maxAttempts: 1 } }, async (ctx) => {
      await ctx.commitChunk(-1, { writes: [payout('x')] }).catch((error: unknown) => errors.push(error));
      await ctx
        .commitChunk(0, { outbox: [{ key: 'has space', url: 'http://bank.invalid', body: '' }] })
        .catch((error: unknown) => errors.push(error));
      await ctx.commit([]).catch((error: unknown) => errors.push(error));
    });
    const key = await engine.enqueue(job, T0);
    await engine.drain(engine.worker('w'));
    expect(errors.map(String)).toEqual([
      'InvalidChunkError: chunk -1 of refuse:2026-09-01T00:30:00Z: chunk number must be a whole number from 0 to 999999, not -1',
      `InvalidChunkError: chunk 0 of refuse:2026-09-01T00:30:00Z: outbound request key "has space" must match ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$`,
      // A handler that catches a chunk's failure cannot succeed without that chunk.
      'InvalidChunkError: chunk -1 of refuse:2026-09-01T00:30:00Z: chunk number must be a whole number from 0 to 999999, not -1',
    ]);
    expect(await engine.slices.get(key)).toMatchObject({ status: 'DEAD' });
    expect(engine.tables.businessItems('payouts')).toEqual([]);
    expect(await engine.chunks.committedChunks(key)).toEqual([]);
    expect(engine.tables.outbox.size).toBe(0);
  });

  it('refuses a chunk after the final commit', async () => {
    const engine = createMemoryEngine(new ManualClock(T0), { businessTables: { payouts: ['id'] } });
    let refused: unknown;
    const job = await engine.register({ id: 'after', policies: FAST }, async (ctx) => {
      await ctx.commit([]);
      refused = await ctx.commitChunk(1, { writes: [payout('y')] }).catch((error: unknown) => error);
    });
    const key = await engine.enqueue(job, T0);
    await engine.drain(engine.worker('w'));
    expect(refused).toBeInstanceOf(InvalidChunkError);
    expect(String(refused)).toContain('the final commit was already sent');
    expect(await engine.slices.get(key)).toMatchObject({ status: 'SUCCEEDED' });
    expect(engine.tables.businessItems('payouts')).toEqual([]);
    expect(executionKey(key.jobId, key.scheduledAt)).toBe('after:2026-09-01T00:30:00Z');
  });
});

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
