/**
 * The real Scanner (two of them, 2 s apart, racing every tick) and a real Worker over
 * the in-memory stores, with one ManualClock for the queue, the worker and
 * (offset) the scanners, stepped forward and back: racing scans send an
 * occurrence twice, the claim that creates its slice admits one, and every
 * occurrence runs exactly once. A message lost on its way is found by the
 * reconciler once its bucket is a grace overdue; a slice waiting in the sweep
 * index is re-sent by the sweep.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import type { WorkQueue } from '../../lib/core/ports.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { MAX_CLOCK_SKEW_MS } from '../../lib/core/slice.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';
import { delegate, recordingQueue, scannerOver, type SentMessage } from '../support/scanner-rig.ts';

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

async function tickAll(
  engine: MemoryEngine,
  clock: ManualClock,
  seconds: readonly number[],
): Promise<{ windowEnd: number; reports: ScanReport[] }> {
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
    expect(
      slices.map((slice) => slice.scheduledAt),
      job.id,
    ).toEqual(expected);
    expect(
      slices.every((slice) => slice.status === 'SUCCEEDED' && slice.fence === 1 && slice.attempts === 1),
      job.id,
    ).toBe(true);
    expect(
      (await repository.ledgerOf(job.id, 0)).map((record) => record.scheduledAt),
      job.id,
    ).toEqual(expected);
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
    // The two scanners raced the same buckets and sent some occurrences twice: the claims settled it.
    const occurrences = JOBS.reduce(
      (sum, job) => sum + occurrencesBetween({ cron: job.schedule, timeZone: 'UTC' }, T0, windowEnd, 10_000).length,
      0,
    );
    expect(reports.reduce((sum, report) => sum + report.sent, 0)).toBeGreaterThan(occurrences);
    // Every message was claimed in time: the reconciler found nothing missing, and nothing waited for the sweep.
    expect(reports.reduce((sum, report) => sum + report.reconciled + report.swept + report.errors, 0)).toBe(0);
    expect(engine.events.ofType('missed')).toEqual([]);
    expect(engine.workQueue.messages()).toEqual([]);
  });

  it('a step back of more than the lookahead sends nothing behind the job, and runs nothing twice on the way forward', async () => {
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
    const sent: SentMessage[] = [];
    const scanner = scannerOver(engine, 'scanner-a', { lookaheadMs: LOOKAHEAD_MS, queue: recordingQueue(engine.workQueue, clock, sent) });
    await scanner.scanShard(0);
    // Down for 10 minutes: the wheel has the job next at T0 + 30 s; everything before T0 + 9 min is older than the window.
    clock.set(T0 + 10 * 60_000);
    sent.length = 0;
    const report = await scanner.scanShard(0);
    expect(report.missed).toBe(51);
    const range = await engine.slices.get({ jobId: 'outage', scheduledAt: T0 + 30_000 });
    expect(range).toMatchObject({ status: 'MISSED', missedUntil: T0 + 9 * 60_000, missedCount: 51, finishedAt: T0 + 10 * 60_000 });
    expect(engine.events.ofType('missed')).toMatchObject([{ scheduledAt: isoSecond(T0 + 30_000), count: 51 }]);
    // The catch-up window's six occurrences and the lookahead's three were sent (with their definition), not missed.
    const window = Array.from({ length: 9 }, (_, i) => T0 + 9 * 60_000 + i * 10_000);
    expect(sent.filter((message) => message.generation === 1).map((message) => message.scheduledAt)).toEqual(window);
    // The claim creates the slice: none yet.
    expect(await engine.slices.get({ jobId: 'outage', scheduledAt: T0 + 9 * 60_000 })).toBeUndefined();
    // Claimed as they arrive: the window's now (a claim later than the window would record them MISSED), the lookahead's at their second.
    await engine.drain(engine.worker('worker'));
    clock.set(T0 + 10 * 60_000 + LOOKAHEAD_MS);
    await engine.drain(engine.worker('worker'));
    expect((await engine.jobs().ledgerOf('outage', T0 + 9 * 60_000)).map((record) => [record.scheduledAt, record.outcome])).toEqual(
      window.map((at) => [at, 'SUCCEEDED']),
    );
  });

  it('after a scanner outage, the buckets a scan catches up are reconciled by a later scan, once their messages had the grace to be claimed', async () => {
    const clock = new ManualClock(T0 - 600_000);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'per-second', schedule: '* * * * * *' }, async () => {});
    const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS });
    const worker = engine.worker('worker');
    await scanner.scanShard(0);
    // The scanners stop for 10 minutes; the workers run what was sent.
    for (let at = T0 - 600_000; at <= T0 - 600_000 + LOOKAHEAD_MS; at += 5000) {
      clock.set(at);
      await engine.drain(worker);
    }
    clock.set(T0);
    const caughtUp = await scanner.scanShard(0);
    expect(caughtUp).toMatchObject({ sent: 600, reconciled: 0, errors: 0 });
    // Sent just now: no slice is taken for missing (the claims create them), none is written ahead of its claim.
    const slices = await engine.jobs().slicesOf('per-second', 0);
    expect(slices).toHaveLength(LOOKAHEAD_MS / 1000);
    expect(slices.every((slice) => slice.status === 'SUCCEEDED')).toBe(true);
    for (let at = T0; at <= T0 + LOOKAHEAD_MS; at += 5000) {
      clock.set(at);
      await engine.drain(worker);
      expect((await scanner.scanShard(0)).reconciled).toBe(0);
    }
    // Every second from T0 - 10 min through the last drain ran, once.
    const ran = Array.from({ length: 600 + LOOKAHEAD_MS / 1000 + 1 }, (_, i) => T0 - 600_000 + i * 1000);
    expect((await engine.jobs().slicesOf('per-second', 0)).map((slice) => [slice.scheduledAt, slice.status, slice.fence])).toEqual(
      ran.map((at) => [at, 'SUCCEEDED', 1]),
    );
    expect(engine.events.ofType('started')).toHaveLength(ran.length);
  });

  it('a new generation taken up from the inbox after its first occurrences were due: they are sent, and not reconciled (sent again) until a grace after that', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock, { sweepGraceMs: 5000 });
    const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS, sweepGraceMs: 5000 });
    await scanner.scanShard(0);
    // Put while the scans are a tick apart: its first occurrences fall due before the next scan takes it up.
    await engine.register({ id: 'late', schedule: '* * * * * *' }, async () => {});
    clock.set(T0 + 20_000);
    const sent: SentMessage[] = [];
    const report = await scannerOver(engine, 'scanner', {
      queue: recordingQueue(engine.workQueue, clock, sent),
      lookaheadMs: LOOKAHEAD_MS,
      sweepGraceMs: 5000,
    }).scanShard(0);
    // T0 + 0..19 s sent late, in buckets the reconciler could judge by their seconds alone: none of them twice.
    expect(sent.filter((message) => message.scheduledAt < T0 + 20_000)).toHaveLength(20);
    expect(report.reconciled).toBe(0);
    clock.set(T0 + 22_000);
    expect((await scanner.scanShard(0)).reconciled).toBe(0);
    // Claimed and run within the grace: no slice was missing when the reconciler looked.
    await engine.drain(engine.worker('worker'));
    clock.set(T0 + 26_000);
    expect((await scanner.scanShard(0)).reconciled).toBe(0);
    const started = engine.events.ofType('started').map((event) => event.executionKey);
    expect(new Set(started).size).toBe(started.length);
    expect(started.length).toBeGreaterThanOrEqual(20);
    expect(await engine.slices.findSweepable(0, Number.MAX_SAFE_INTEGER, 100)).toEqual([]);
  });

  it('a change before any scan records the due occurrences SKIPPED with its reason (the in-memory repository too)', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'unscanned', schedule: '*/10 * * * * *' }, async () => {});
    clock.set(T0 + 25_000);
    await engine.jobs().delete('unscanned');
    const rows = [...engine.tables.slices.values()].filter((row) => row.jobId === 'unscanned');
    expect(rows.map((row) => [row.scheduledAt - T0, row.status, row.skipReason, row.generation])).toEqual([
      [0, 'SKIPPED', 'deleted', 1],
      [10_000, 'SKIPPED', 'deleted', 1],
      [20_000, 'SKIPPED', 'deleted', 1],
    ]);
  });

  it('a message lost on its way is found by the reconciler once its bucket is a grace overdue: created ENQUEUED in the sweep index, re-sent, run once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'lost-message', schedule: '*/10 * * * * *' }, async () => {});
    const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS });
    const worker = engine.worker('worker');
    await scanner.scanShard(0);
    // The message for T0 is lost: it leaves no slice (the claim would have created it), only its wheel entry.
    const [lost, ...others] = engine.workQueue.receive(T0);
    expect(others).toEqual([]);
    expect(engine.workQueue.delete(lost?.receiptHandle ?? '')).toBe(true);
    const grace = engine.tables.sweepGraceMs;
    const reports: ScanReport[] = [];
    // Until every start in T0's bucket is a grace overdue (T0 + 5 s + grace), the reconciler leaves it alone.
    for (let at = T0 + 5000; at < T0 + 5000 + grace; at += 5000) {
      clock.set(at);
      await engine.drain(worker);
      reports.push(await scanner.scanShard(0));
    }
    expect(reports.map((report) => report.reconciled)).toEqual(reports.map(() => 0));
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toBeUndefined();
    clock.set(T0 + 5000 + grace);
    await engine.drain(worker);
    const found = await scanner.scanShard(0);
    expect(found.reconciled).toBe(1);
    expect(await engine.slices.get({ jobId: job.id, scheduledAt: T0 })).toMatchObject({
      status: 'ENQUEUED',
      generation: 1,
      sweepAt: clock.now() + grace,
    });
    await engine.drain(worker);
    expect(await engine.slices.getLedger({ jobId: job.id, scheduledAt: T0 })).toMatchObject({ fence: 1, outcome: 'SUCCEEDED' });
    expect(engine.events.ofType('started').filter((event) => event.scheduledAt === isoSecond(T0))).toHaveLength(1);
    // The occurrences whose messages arrived were claimed in time: only the lost one was sent again.
    expect((await scanner.scanShard(0)).reconciled).toBe(0);
  });

  it.each([
    { name: 'every 10 s, due from a minute ago', schedule: '*/10 * * * * *', dueFromS: 60, lostS: 30, sent: 9 },
    // More late occurrences than the reconciler reads at once: the lost one is past the first page.
    { name: 'every second, due from 1,400 s ago', schedule: '* * * * * *', dueFromS: 1400, lostS: 100, sent: 1430 },
  ])(
    'a generation taken up from the inbox from behind the reconciled range (a first scan after an outage), $name: a lost message of it is still found',
    async ({ schedule, dueFromS, lostS, sent }) => {
      // As a shard's first scan finds a job whose stored first occurrence is in the past (an upgrade after downtime,
      // the drill's simulated outage): the cursor the scan writes starts at the current bucket.
      const clock = new ManualClock(T0 - dueFromS * 1000);
      const engine = createMemoryEngine(clock);
      const job = await engine.register({ id: 'back-from-outage', schedule, policies: { catchUpWindowMs: 3_600_000 } }, async () => {});
      expect(job.nextFireAt).toBe(T0 - dueFromS * 1000);
      clock.set(T0);
      const lostAt = T0 - lostS * 1000;
      const dropping: WorkQueue = {
        ...delegate<WorkQueue>(engine.workQueue),
        send: (messages) => engine.workQueue.send(messages.filter((message) => message.scheduledAt !== lostAt)),
      };
      const firstScan = await scannerOver(engine, 'scanner', { queue: dropping, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
      // From the stored first occurrence through the lookahead (the one at `lostAt` lost on its way), each once.
      expect(firstScan).toMatchObject({ sent, errors: 0 });
      const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS });
      const worker = engine.worker('worker');
      const grace = engine.tables.sweepGraceMs;
      let reconciled = 0;
      for (let at = T0; at <= T0 + 10_000 + grace; at += 5000) {
        clock.set(at);
        await engine.drain(worker);
        reconciled += (await scanner.scanShard(0)).reconciled;
      }
      await engine.drain(worker);
      expect(reconciled).toBe(1);
      expect(await engine.slices.getLedger({ jobId: job.id, scheduledAt: lostAt })).toMatchObject({ fence: 1, outcome: 'SUCCEEDED' });
      const started = engine.events.ofType('started').map((event) => event.executionKey);
      expect(new Set(started).size).toBe(started.length);
    },
  );

  it('a slice waiting in the sweep index whose message was received by a worker that died is re-sent by the sweep and runs once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    // A yearly job: the scans send nothing for it here; the slot is an operator's (ENQUEUED in the sweep index).
    const job = await engine.register({ id: 'waiting', schedule: '0 0 1 1 *' }, async () => {});
    const key = await engine.enqueue(job, T0);
    // Received by a worker that died before claiming: never deleted, but its receipt is gone with it.
    engine.workQueue.receive(T0, { visibilitySeconds: 43_200 });
    const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS });
    clock.set(T0 + engine.tables.sweepGraceMs - 1000);
    expect((await scanner.scanShard(0)).swept).toBe(0);
    // Its sweep time (due + grace) passes: the next scan re-sends it, and the worker runs it.
    clock.set(T0 + engine.tables.sweepGraceMs);
    expect((await scanner.scanShard(0)).swept).toBe(1);
    await engine.drain(engine.worker('worker'));
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 1, outcome: 'SUCCEEDED' });
    expect(engine.events.ofType('started')).toHaveLength(1);
  });
});
