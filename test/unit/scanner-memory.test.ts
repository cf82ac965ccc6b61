/**
 * The real Scanner (two of them, 2 s apart, racing every tick) and a real Worker over
 * the in-memory stores, with one ManualClock for the queue, the worker and
 * (offset) the scanners, stepped forward and back: every occurrence runs exactly once.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { MAX_CLOCK_SKEW_MS } from '../../lib/core/slice.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const LOOKAHEAD_MS = 30_000;
const JOBS = [
  { id: 'every-10s', schedule: '*/10 * * * * *' },
  { id: 'every-3s', schedule: '*/3 * * * * *' },
  { id: 'every-minute', schedule: '* * * * *' },
];

/** Seconds from T0 at which both scanners tick, then the worker drains what is visible. */
function walk(...legs: [from: number, to: number][]): number[] {
  return legs.flatMap(([from, to]) => Array.from({ length: (to - from) / 5 + 1 }, (_, i) => from + i * 5));
}

async function tickAll(engine: MemoryEngine, clock: ManualClock, seconds: readonly number[]): Promise<{ windowEnd: number; reports: ScanReport[] }> {
  // Scanner B's clock runs 2 s behind (within the promised skew).
  const scanners = [
    engine.scanner('scanner-a', { lookaheadMs: LOOKAHEAD_MS }),
    engine.scanner('scanner-b', { lookaheadMs: LOOKAHEAD_MS, clock: new OffsetClock(-MAX_CLOCK_SKEW_MS, clock) }),
  ];
  const worker = engine.worker('worker');
  const reports: ScanReport[] = [];
  let windowEnd = 0;
  for (const second of seconds) {
    clock.set(T0 + second * 1000);
    windowEnd = Math.max(windowEnd, clock.now() + LOOKAHEAD_MS);
    reports.push(...(await Promise.all(scanners.map((scanner) => scanner.scanShard(0)))));
    await engine.drain(worker);
  }
  // Past the furthest window, without scanning further: every slice created so far is due.
  clock.set(windowEnd + 1000);
  await engine.drain(worker);
  return { windowEnd, reports };
}

async function expectEachOccurrenceOnce(engine: MemoryEngine, windowEnd: number): Promise<void> {
  const repository = engine.jobs();
  for (const job of JOBS) {
    const expected = occurrencesBetween({ cron: job.schedule, timeZone: 'UTC' }, T0, windowEnd, 10_000);
    const slices = await repository.slicesOf(job.id, 0);
    expect(slices.map((slice) => slice.scheduledAt), job.id).toEqual(expected);
    expect(slices.every((slice) => slice.status === 'SUCCEEDED' && slice.fence === 1 && slice.attempts === 1), job.id).toBe(true);
    expect((await repository.ledgerOf(job.id, 0)).map((record) => record.scheduledAt), job.id).toEqual(expected);
  }
  const starts = new Map<string, number>();
  for (const event of engine.events.ofType('started')) starts.set(event.executionKey, (starts.get(event.executionKey) ?? 0) + 1);
  expect([...starts.values()].every((count) => count === 1)).toBe(true);
  expect(engine.events.ofType('committed')).toHaveLength(starts.size);
}

describe('Scanner over the in-memory stores', () => {
  it('a clock stepped back (twice) and forward again fires every occurrence exactly once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    for (const job of JOBS) await engine.register(job, async () => {});
    const { windowEnd, reports } = await tickAll(engine, clock, walk([0, 20], [-20, 60], [30, 100]));
    await expectEachOccurrenceOnce(engine, windowEnd);
    // The two scanners raced for the same jobs, and the version condition settled it.
    expect(reports.reduce((sum, report) => sum + report.conflicts, 0)).toBeGreaterThan(0);
    expect(engine.events.ofType('missed')).toEqual([]);
    expect(engine.workQueue.messages()).toEqual([]);
  });

  it('a step back of more than the lookahead creates nothing behind the job, and nothing twice on the way forward', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    for (const job of JOBS) await engine.register(job, async () => {});
    const { windowEnd } = await tickAll(engine, clock, walk([0, 40], [-120, 0], [5, 60]));
    await expectEachOccurrenceOnce(engine, windowEnd);
    for (const job of JOBS) expect((await engine.jobs().slicesOf(job.id, 0)).every((slice) => slice.scheduledAt >= T0)).toBe(true);
  });

  it('after an outage longer than the catch-up window: one MISSED item for the range, one event, the window caught up', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'outage', schedule: '*/10 * * * * *', policies: { catchUpWindowMs: 60_000 } }, async () => {});
    const scanner = engine.scanner('scanner-a', { lookaheadMs: LOOKAHEAD_MS });
    await scanner.scanShard(0);
    // Down for 10 minutes: the job's nextFireAt is T0 + 30 s; everything before T0 + 9 min is older than the window.
    clock.set(T0 + 10 * 60_000);
    const report = await scanner.scanShard(0);
    expect(report.missed).toBe(51);
    const range = await engine.slices.get({ jobId: 'outage', scheduledAt: T0 + 30_000 });
    expect(range).toMatchObject({ status: 'MISSED', missedUntil: T0 + 9 * 60_000, missedCount: 51, finishedAt: T0 + 10 * 60_000 });
    expect(engine.events.ofType('missed')).toMatchObject([{ scheduledAt: isoSecond(T0 + 30_000), count: 51 }]);
    // The catch-up window's six occurrences and the lookahead's three were created, not missed.
    const created = await engine.slices.get({ jobId: 'outage', scheduledAt: T0 + 9 * 60_000 });
    expect(created?.status).toBe('ENQUEUED');
  });

  it('a message lost between scan and queue is re-sent by the sweep and still runs once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'lost-message', schedule: '*/10 * * * * *' }, async () => {});
    await engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    const first = engine.workQueue.messages().filter((message) => message.key.scheduledAt === T0);
    expect(first).toHaveLength(1);
    // Received by a worker that died before claiming: never deleted, but its receipt is gone with it.
    clock.set(T0);
    engine.workQueue.receive(T0, { visibilitySeconds: 43_200 });
    clock.set(T0 + 5000);
    await engine.drain(engine.worker('worker'));
    expect((await engine.slices.get({ jobId: job.id, scheduledAt: T0 }))?.status).toBe('ENQUEUED');
    // Its sweep time (due + grace) passes: the next scan re-sends it, and the worker runs it.
    clock.set(T0 + engine.tables.sweepGraceMs);
    const report = await engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    expect(report.swept).toBeGreaterThanOrEqual(1);
    await engine.drain(engine.worker('worker'));
    expect(await engine.slices.getLedger({ jobId: job.id, scheduledAt: T0 })).toMatchObject({ fence: 1, outcome: 'SUCCEEDED' });
    expect(engine.events.ofType('started').filter((event) => event.scheduledAt === isoSecond(T0))).toHaveLength(1);
  });
});
