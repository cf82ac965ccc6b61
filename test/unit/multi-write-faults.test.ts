/**
 * Engine operations with a failure between their writes, over the in-memory
 * stores with the manual clock, the failure injected by wrapping a port
 * (test/support/scanner-rig.ts): the reconciler's send after it created the
 * missing slice, and a shard's first scan's cursor after it seeded the inbox.
 * Each occurrence still runs, once.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { newOutboxItem, outboxShardOf, type OutboxStore } from '../../lib/core/chunks.ts';
import type { SliceStore, WheelStore, WorkQueue } from '../../lib/core/ports.ts';
import { OutboxDispatcher } from '../../lib/engine/outbox-dispatcher.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';
import { delegate, scannerOver } from '../support/scanner-rig.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const EVERY_10S = '*/10 * * * * *';
const LOOKAHEAD_MS = 30_000;

/** Every occurrence of `jobId` in `[T0, to)` SUCCEEDED once, on its first attempt. */
async function expectEachRanOnce(engine: MemoryEngine, jobId: string, to: number): Promise<void> {
  const expected = occurrencesBetween({ cron: EVERY_10S, timeZone: 'UTC' }, T0, to, 1000);
  const slices = await engine.jobs().slicesOf(jobId, T0);
  expect(slices.filter((slice) => slice.scheduledAt < to).map((slice) => [slice.scheduledAt, slice.status])).toEqual(
    expected.map((at) => [at, 'SUCCEEDED']),
  );
  const starts = engine.events.ofType('started').filter((event) => event.jobId === jobId && Date.parse(event.scheduledAt) < to);
  expect(starts).toHaveLength(expected.length);
}

describe('a failure between the writes of', () => {
  it('the reconciler (the missing slice created, its send refused): the sweep sends it, and it runs once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'lost', schedule: EVERY_10S }, async () => {});
    // The first scan's messages are lost on their way.
    const lost: WorkQueue = { ...delegate<WorkQueue>(engine.workQueue), send: async () => {} };
    await scannerOver(engine, 'first', { queue: lost, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    // A grace later, the reconciler finds the slices missing and creates them; its send is refused.
    let refused = 0;
    const refusing: WorkQueue = {
      ...delegate<WorkQueue>(engine.workQueue),
      send: async (messages) => {
        if (refused === 0 && messages.some((message) => message.scheduledAt < clock.now())) {
          refused++;
          throw new Error('SendMessageBatch refused (test)');
        }
        await engine.workQueue.send(messages);
      },
    };
    clock.set(T0 + 70_000);
    const report = await scannerOver(engine, 'second', { queue: refusing, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    expect(refused).toBe(1);
    expect(report.errors).toBe(1);
    expect(
      (await engine.jobs().slicesOf('lost', T0)).filter((slice) => slice.scheduledAt < T0 + 30_000).map((slice) => slice.status),
    ).toEqual(['ENQUEUED', 'ENQUEUED', 'ENQUEUED']);
    // From here the sweep (and the next scans) carry on.
    const worker = engine.worker('worker');
    for (let second = 70; second <= 160; second += 5) {
      clock.set(T0 + second * 1000);
      await scannerOver(engine, 'later', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
      await engine.drain(worker);
    }
    await expectEachRanOnce(engine, 'lost', T0 + 150_000);
  });

  it("a shard's first scan (the inbox seeded, the cursor's creation refused): the next scan seeds again and sends everything", async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'seeded', schedule: EVERY_10S }, async () => {});
    // An installation from before the wheel: the job is stored, nothing in the inbox, no cursor.
    engine.tables.wheelShard(0).inbox.clear();
    let refused = 0;
    const refusing: WheelStore = {
      ...delegate<WheelStore>(engine.wheel),
      moveCursor: async (shard, cursor) => {
        if (refused++ === 0) throw new Error('UpdateItem refused (test)');
        return engine.wheel.moveCursor(shard, cursor);
      },
    };
    await expect(scannerOver(engine, 'first', { wheel: refusing, lookaheadMs: LOOKAHEAD_MS }).scanShard(0)).rejects.toThrow(
      /refused \(test\)/,
    );
    expect(await engine.wheel.readCursor(0)).toBeUndefined();
    const worker = engine.worker('worker');
    for (let second = 0; second <= 60; second += 5) {
      clock.set(T0 + second * 1000);
      await scannerOver(engine, 'later', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
      await engine.drain(worker);
    }
    await expectEachRanOnce(engine, 'seeded', T0 + 60_000);
  });

  it('a sweep (the slices sent, deferring their next sweep refused): the scan stops before its cursor, the next one sends again, each runs once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'swept', schedule: '0 0 0 1 1 *' }, async () => {});
    // Two slots waiting in the sweep index with no message (an operator's, say), their sweep time passed.
    const keys = [T0 + 10_000, T0 + 20_000].map((scheduledAt) => ({ jobId: job.id, scheduledAt, sweepAt: scheduledAt + 1000 }));
    expect(
      await engine.slices.enqueue(
        { generation: job.generation, handler: job.handler, policies: job.policies, shard: job.shard },
        keys,
        clock.now(),
      ),
    ).toHaveLength(2);
    await scannerOver(engine, 'earlier', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    clock.set(T0 + 30_000);
    let refused = 0;
    const refusing: SliceStore = {
      ...delegate<SliceStore>(engine.slices),
      deferSweep: async () => {
        refused++;
        throw new Error('UpdateItem refused (test)');
      },
    };
    const cursorBefore = (await engine.wheel.readCursor(0))?.scannedThrough;
    await expect(scannerOver(engine, 'first', { slices: refusing, lookaheadMs: LOOKAHEAD_MS }).scanShard(0)).rejects.toThrow(
      /refused \(test\)/,
    );
    expect(refused).toBeGreaterThan(0);
    expect((await engine.wheel.readCursor(0))?.scannedThrough).toBe(cursorBefore);
    expect(
      engine.workQueue
        .messages()
        .map((message) => message.key.scheduledAt)
        .sort(),
    ).toEqual([T0 + 10_000, T0 + 20_000]);
    await scannerOver(engine, 'next', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    expect(engine.workQueue.messages()).toHaveLength(4);
    await engine.drain(engine.worker('worker'));
    const slices = await engine.jobs().slicesOf(job.id, T0);
    expect(slices.map((slice) => [slice.scheduledAt, slice.status, slice.attempts])).toEqual([
      [T0 + 10_000, 'SUCCEEDED', 1],
      [T0 + 20_000, 'SUCCEEDED', 1],
    ]);
    expect(engine.events.ofType('started')).toHaveLength(2);
  });

  it('an outbox delivery (taken and sent, its record refused): delivered again with the same idempotency key after the take runs out, then recorded', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const item = newOutboxItem('settle:2026-06-01T12:00:00Z', 0, 1, T0, {
      key: 'm1',
      url: 'https://bank.invalid/wires',
      body: '{"amount":1}',
    });
    engine.tables.outbox.set(item.idempotencyKey, item);
    const deliveries: string[] = [];
    let refused = 0;
    const store: OutboxStore = {
      ...delegate<OutboxStore>(engine.outbox),
      record: async (taken, result) => {
        if (refused++ === 0) throw new Error('UpdateItem refused (test)');
        return engine.outbox.record(taken, result);
      },
    };
    const errors: string[] = [];
    const dispatcher = new OutboxDispatcher({
      store,
      clock,
      takeMs: 10_000,
      deliver: async ({ headers }) => {
        deliveries.push(headers['idempotency-key'] as string);
        return { status: 200 };
      },
      // Returns the new length, as a logger may return something: the pass must not count it as a result.
      onError: (error) => errors.push(String(error)),
    });
    const shard = outboxShardOf(item.executionKey);
    expect(await dispatcher.dispatchDue(100, shard)).toEqual({ delivered: 0, retried: 0, dead: 0 });
    expect(errors).toEqual(['Error: UpdateItem refused (test)']);
    // Taken: hidden from every dispatcher until the take runs out.
    expect(await dispatcher.dispatchDue(100, shard)).toEqual({ delivered: 0, retried: 0, dead: 0 });
    clock.advance(10_001);
    expect(await dispatcher.dispatchDue(100, shard)).toEqual({ delivered: 1, retried: 0, dead: 0 });
    expect(deliveries).toEqual([item.idempotencyKey, item.idempotencyKey]);
    expect((await engine.outbox.list(item.executionKey)).map((stored) => [stored.status, stored.deliveries])).toEqual([['DELIVERED', 2]]);
  });
});
