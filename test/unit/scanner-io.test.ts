/**
 * The scanner's I/O rules, with the real Scanner over the in-memory stores
 * and a manual clock, and a wrapper only where a fault is needed (a store
 * call that fails, a slow one that moves the clock): delays computed as each
 * batch is sent, a long outage caught up in one scan, a range older than the
 * catch-up window recorded once, and a failing call that leaves its bucket,
 * not a job, to the next scan (the cursor does not move past it).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { StoreBusyError } from '../../lib/core/errors.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import type { JobReader, WheelStore } from '../../lib/core/ports.ts';
import { WHEEL_BUCKET_MS } from '../../lib/core/wheel.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';
import { delegate, recordingQueue, scannerOver, type SentMessage } from '../support/scanner-rig.ts';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const noop = async (): Promise<void> => {};

/** "jobId@seconds from T0" of each message, in send order. */
const named = (sent: readonly SentMessage[]): string[] => sent.map((message) => `${message.jobId}@${(message.scheduledAt - T0) / 1000}`);

describe('Scanner I/O', () => {
  it('a slow 300-job scan sends each batch with the delay left at its own send time, so every message surfaces within its second', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    for (let i = 0; i < 300; i++) await engine.register({ id: `burst-${i}`, schedule: '10 0 8 1 12 *' }, noop);
    const sent: SentMessage[] = [];
    // Each batch of 10 waits 200 ms for its reply: the 30 batches take 6 s of the 10 s before the occurrence.
    const queue = recordingQueue(engine.workQueue, clock, sent, { after: () => clock.advance(200) });
    const report = await scannerOver(engine, 's1', { queue }).scanShard(0);
    expect(report).toMatchObject({ sent: 300, errors: 0, incomplete: false });
    expect(sent).toHaveLength(300);
    expect(new Set(sent.map((message) => message.jobId)).size).toBe(300);
    expect(clock.now() - T0).toBe(30 * 200);
    const surfacesLate = sent.map((message) => message.sentAt + message.delaySeconds * 1000 - message.scheduledAt);
    // Delays are whole seconds, rounded down: a message surfaces at most 1 s before its occurrence, never after it.
    expect(Math.max(...surfacesLate)).toBeLessThanOrEqual(0);
    expect(Math.min(...surfacesLate)).toBeGreaterThan(-1000);
    expect(sent[0]?.delaySeconds).toBe(10);
    // Eight batches in flight (send-delayed.ts): the last goes out once 22 replies came back, 4.4 s in.
    expect(Math.min(...sent.map((message) => message.delaySeconds))).toBe(5);
  });

  it('a per-second job after a 10-minute outage is caught up in one scan: every occurrence of the window and the lookahead sent once', async () => {
    const clock = new ManualClock(T0 - 600_000);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'job', schedule: '* * * * * *' }, noop);
    clock.set(T0);
    const sent: SentMessage[] = [];
    const report = await scannerOver(engine, 's1', { queue: recordingQueue(engine.workQueue, clock, sent) }).scanShard(0);
    // The default catch-up window is 10 minutes: every occurrence from then to the end of the lookahead.
    const instants = sent.map((message) => message.scheduledAt);
    expect(instants).toEqual(Array.from({ length: 720 }, (_, i) => T0 - 600_000 + i * 1000));
    expect(report).toMatchObject({ sent: 720, missed: 0, skipped: 0, errors: 0, incomplete: false });
    expect(engine.events.ofType('missed')).toEqual([]);
    expect(await engine.wheel.readCursor(0)).toMatchObject({ scannedThrough: T0 + 120_000 });
  });

  it('occurrences older than the catch-up window: one MISSED item and one event for the range, when two scanners race it or a scan is redone', async () => {
    const clock = new ManualClock(T0 - 3_600_000);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'outage', schedule: '0 * * * * *' }, noop);
    clock.set(T0);
    const missedItems = () => [...engine.tables.slices.values()].filter((row) => row.jobId === 'outage' && row.status === 'MISSED');
    const reports = await Promise.all([scannerOver(engine, 's1').scanShard(0), scannerOver(engine, 's2').scanShard(0)]);
    expect(missedItems()).toMatchObject([{ scheduledAt: T0 - 3_600_000, missedUntil: T0 - 600_000, missedCount: 50, finishedAt: T0 }]);
    // The scan that wrote the record reports it; the other found it written and does not.
    expect(reports.map((report) => report.missed).sort((a, b) => a - b)).toEqual([0, 50]);
    const events = engine.events.ofType('missed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ jobId: 'outage', scheduledAt: isoSecond(T0 - 3_600_000), count: 50, until: isoSecond(T0 - 600_000) });
    // The same scan redone a second later (as if its scanner had died before taking the inbox entry and moving the cursor): the item stays as written.
    clock.set(T0 + 1000);
    engine.tables.wheelShard(0).cursor = undefined;
    await engine.wheel.putInbox(0, { jobId: 'outage', generation: 1, from: T0 - 3_600_000 });
    expect(await scannerOver(engine, 's3').scanShard(0)).toMatchObject({ errors: 0, missed: 0 });
    expect(missedItems()).toMatchObject([{ missedCount: 50, finishedAt: T0 }]);
    expect(engine.events.ofType('missed')).toHaveLength(1);
  });
});

/** The engine's stores as the scanner sees them (the ports), whose calls the wrappers pass on. */
const wheelPort = (engine: MemoryEngine): WheelStore => engine.wheel;
const jobsPort = (engine: MemoryEngine): JobReader => engine.jobReader;

/** Two jobs due every 5 and 10 seconds from T0, scanned with a 30 s lookahead: buckets T0 to T0 + 25 s. */
async function twoJobs(): Promise<{ clock: ManualClock; engine: MemoryEngine }> {
  const clock = new ManualClock(T0);
  const engine = createMemoryEngine(clock);
  await engine.register({ id: 'a', schedule: '*/5 * * * * *' }, noop);
  await engine.register({ id: 'b', schedule: '*/10 * * * * *' }, noop);
  return { clock, engine };
}

const ALL = ['a@0', 'b@0', 'a@5', 'a@10', 'b@10', 'a@15', 'a@20', 'b@20', 'a@25'];
const BEFORE_FAILING_BUCKET = ['a@0', 'b@0', 'a@5', 'a@10', 'b@10'];
const FAILING_BUCKET = T0 + 15_000;

type Fault = 'entriesAt' | 'records' | 'send' | 'place landed';

/**
 * The engine's stores with one call failing, once, while the scan has
 * bucket T0 + 15 s in hand; 'place landed': the write of the bucket's next
 * entries lands but its reply is lost (a timeout).
 */
function faulty(engine: MemoryEngine, clock: ManualClock, fault: Fault, sent: SentMessage[]) {
  let inHand: number | undefined;
  let failed = false;
  const failOnce = (at: Fault): boolean => {
    if (fault !== at || inHand !== FAILING_BUCKET || failed) return false;
    failed = true;
    return true;
  };
  const wheel: WheelStore = {
    ...delegate<WheelStore>(engine.wheel),
    entriesAt: async (shard, bucket) => {
      inHand = bucket;
      if (failOnce('entriesAt')) throw new StoreBusyError('query', 'ProvisionedThroughputExceededException');
      return engine.wheel.entriesAt(shard, bucket);
    },
    place: async (shard, entries, now) => {
      await wheelPort(engine).place(shard, entries, now);
      if (failOnce('place landed'))
        throw Object.assign(new Error('a request has exceeded the configured 3000 ms requestTimeout'), { name: 'TimeoutError' });
    },
  };
  const jobs: JobReader = {
    ...delegate<JobReader>(engine.jobReader),
    records: async (ids, consistent) => {
      if (failOnce('records')) throw new StoreBusyError('batch get', 'ThrottlingException');
      return jobsPort(engine).records(ids, consistent);
    },
  };
  const queue = recordingQueue(engine.workQueue, clock, sent, {
    before: () => {
      if (failOnce('send')) throw new Error('SQS unavailable');
    },
  });
  const errors: unknown[] = [];
  return { overrides: { wheel, jobs, queue, lookaheadMs: 30_000, onError: (error: unknown) => void errors.push(error) }, errors };
}

describe('a failing store call leaves its bucket to the next scan', () => {
  it.each<[Fault, string[]]>([
    ['entriesAt', []],
    ['records', []],
    ['send', []],
    // The bucket's messages went out before the write that failed: the redo sends them again (the claim admits one).
    ['place landed', ['a@15']],
  ])('%s fails: the cursor stays at the bucket, the scan is incomplete, and the next scan sends the rest', async (fault, sentTwice) => {
    const { clock, engine } = await twoJobs();
    const sent: SentMessage[] = [];
    const { overrides, errors } = faulty(engine, clock, fault, sent);
    const first = await scannerOver(engine, 's1', overrides).scanShard(0);
    // The jobs' next entries are past where it stopped, in the range it claimed: it keeps their inbox entries.
    expect(first).toMatchObject({ errors: 1, incomplete: true, buckets: 3, inboxKept: 2 });
    expect(errors).toHaveLength(1);
    expect(await engine.wheel.readCursor(0)).toMatchObject({ scannedThrough: FAILING_BUCKET });
    expect(named(sent).sort()).toEqual([...BEFORE_FAILING_BUCKET, ...sentTwice].sort());

    clock.advance(1000);
    const second: ScanReport = await scannerOver(engine, 's2', overrides).scanShard(0);
    expect(second).toMatchObject({ errors: 0, incomplete: false, inboxKept: 0 });
    expect(await engine.wheel.readCursor(0)).toMatchObject({ scannedThrough: T0 + 30_000 });
    // Nothing lost. Sent twice: what the inbox entries stand for before the cursor (the second scan took them up
    // again), and what went out before the failure (a lost reply's next entry is read once).
    expect(named(sent).sort()).toEqual([...ALL, ...BEFORE_FAILING_BUCKET, ...sentTwice].sort());
  });

  it('a deadline stops taking up buckets: the scan is incomplete, the cursor is where it stopped, the next scan goes on', async () => {
    const { clock, engine } = await twoJobs();
    const sent: SentMessage[] = [];
    // Each bucket's read takes 2 s of the scan's 5 s budget.
    const wheel: WheelStore = {
      ...delegate<WheelStore>(engine.wheel),
      entriesAt: async (shard, bucket) => {
        clock.advance(2000);
        return engine.wheel.entriesAt(shard, bucket);
      },
    };
    const overrides = { wheel, queue: recordingQueue(engine.workQueue, clock, sent), lookaheadMs: 30_000 };
    const first = await scannerOver(engine, 's1', overrides).scanShard(0, { deadline: T0 + 5000 });
    expect(first).toMatchObject({ buckets: 3, errors: 0, incomplete: true, inboxKept: 2 });
    expect(await engine.wheel.readCursor(0)).toMatchObject({ scannedThrough: T0 + 3 * WHEEL_BUCKET_MS });
    expect(named(sent).sort()).toEqual(BEFORE_FAILING_BUCKET.toSorted());
    const second = await scannerOver(engine, 's2', overrides).scanShard(0);
    expect(second).toMatchObject({ incomplete: false });
    // Started at T0 + 6 s, its lookahead also reaches the bucket of T0 + 30 s; it took the kept inbox entries up again.
    expect(named(sent).sort()).toEqual([...ALL, 'a@30', 'b@30', ...BEFORE_FAILING_BUCKET].sort());
  });

  it('a failure while taking up the inbox leaves the inbox entry to the next scan', async () => {
    const { clock, engine } = await twoJobs();
    const sent: SentMessage[] = [];
    let refuse = true;
    const wheel: WheelStore = {
      ...delegate<WheelStore>(engine.wheel),
      place: async (shard, entries, now) => {
        if (refuse) throw new StoreBusyError('put', 'ThrottlingException');
        await wheelPort(engine).place(shard, entries, now);
      },
    };
    const overrides = { wheel, queue: recordingQueue(engine.workQueue, clock, sent), lookaheadMs: 30_000 };
    expect(await scannerOver(engine, 's1', overrides).scanShard(0)).toMatchObject({ errors: 1, incomplete: true });
    expect((await engine.wheel.inbox(0)).map((entry) => entry.jobId).sort()).toEqual(['a', 'b']);
    refuse = false;
    expect(await scannerOver(engine, 's2', overrides).scanShard(0)).toMatchObject({ errors: 0, incomplete: false });
    expect(await engine.wheel.inbox(0)).toEqual([]);
    expect(named(sent).sort()).toEqual([...ALL].sort());
  });
});
