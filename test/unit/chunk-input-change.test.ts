/**
 * A chunked slot whose input list changes between attempts. Each chunk is
 * committed with its row ids as its input (`ctx.commitChunk(n, work, { input })`,
 * as the settlement example does): a list that shrank before a committed
 * chunk, or past one, fails the slot DEAD at once with the reason, never
 * SUCCEEDED with a merchant unpaid; a list that only grew at its end is
 * accounted for by the committed chunks, and the slot succeeds with every row.
 * Real Worker over the in-memory stores, ManualClock.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-09-01T00:30:00Z');
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 1000, backoffMaxMs: 1000, maxAttempts: 3 };
const PER_CHUNK = 3;

interface Run {
  readonly engine: MemoryEngine;
  readonly clock: ManualClock;
  readonly key: { jobId: string; scheduledAt: number };
  /** The merchant list the handler reads (an outside table, as of now). */
  merchants: string[];
}

/** A settlement-like job: 3 merchants a chunk, each chunk named by its merchant ids; its first attempt dies after `crashAfter` chunks. */
async function setUp(merchants: string[], crashAfter: number): Promise<Run> {
  const clock = new ManualClock(T0);
  const engine = createMemoryEngine(clock, { businessTables: { payouts: ['id'] } });
  const run: Run = { engine, clock, key: { jobId: 'settle', scheduledAt: T0 }, merchants };
  const job = await engine.register({ id: 'settle', policies: FAST }, async (ctx) => {
    const list = [...run.merchants];
    for (let n = 0; n * PER_CHUNK < list.length; n++) {
      const ids = list.slice(n * PER_CHUNK, (n + 1) * PER_CHUNK);
      await ctx.commitChunk(n, { writes: ids.map((id) => ({ put: { tableName: 'payouts', item: { id } } })) }, { input: ids });
      if (ctx.attempt === 1 && n + 1 === crashAfter) throw new Error('worker died mid-batch');
    }
    await ctx.commit([]);
  });
  await engine.enqueue(job, T0);
  await engine.drain(engine.worker('first'));
  expect(await engine.slices.get(run.key)).toMatchObject({ status: 'FAILED', attempts: 1 });
  return run;
}

async function retry(run: Run): Promise<void> {
  run.clock.set(T0 + 5000);
  await run.engine.drain(run.engine.worker('retry'));
}

const paid = (run: Run): string[] =>
  run.engine.tables
    .businessItems('payouts')
    .map((item) => String(item.id))
    .sort();
const merchants = (count: number): string[] => Array.from({ length: count }, (_, i) => `m${i + 1}`);

describe('a chunked slot whose input list changed between attempts', () => {
  it('shrank before a committed chunk (every later merchant moves a place): DEAD at once with the reason, not SUCCEEDED with a merchant unpaid', async () => {
    const run = await setUp(merchants(9), 2);
    expect(paid(run)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    run.merchants = run.merchants.filter((id) => id !== 'm2');
    await retry(run);
    const slice = await run.engine.slices.get(run.key);
    expect(slice).toMatchObject({ status: 'DEAD', attempts: 2 });
    expect(slice?.lastError).toMatch(/^ChunkInputChangedError: chunk 0 of settle:2026-09-01T00:30:00Z: its input changed between attempts/);
    expect(run.engine.deadLetters.records).toMatchObject([
      { jobId: 'settle', attempts: 2, error: expect.stringMatching(/ChunkInputChangedError/) },
    ]);
    expect(run.engine.events.ofType('committed')).toEqual([]);
  });

  it('shrank past a committed chunk (its plan has fewer chunks now): DEAD at the final commit, naming the chunk left out', async () => {
    const run = await setUp(merchants(9), 3);
    run.merchants = merchants(6);
    await retry(run);
    const slice = await run.engine.slices.get(run.key);
    expect(slice).toMatchObject({ status: 'DEAD', attempts: 2 });
    expect(slice?.lastError).toMatch(/chunk 2 of settle:.*this attempt's chunks leave it out/);
  });

  it('grew at its end (new merchants in new chunks): the committed chunks account for it, and the slot succeeds with every row', async () => {
    const run = await setUp(merchants(9), 2);
    run.merchants = merchants(10);
    await retry(run);
    expect(await run.engine.slices.get(run.key)).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
    expect(paid(run)).toEqual(merchants(10).sort());
    expect((await run.engine.chunks.committedChunks(run.key)).map((record) => [record.chunk, record.inputDigest?.length])).toEqual([
      [0, 32],
      [1, 32],
      [2, 32],
      [3, 32],
    ]);
  });
});
