/**
 * A change is picked up promptly, in virtual time: the real Scanner, Worker
 * and in-memory repository with the manual clock, the tick every 60 s, and
 * the scan queue delivered to a scanner one second after each request. A job
 * put at :18 used to run :20 at the next tick (41 s late, issue 28); a
 * change now asks for a scan of its shard, so its next occurrence runs on
 * time: a put, a resume, and the end of a timed pause that comes before the
 * next tick.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { ScanQueue, ScanRequest } from '../../lib/core/ports.ts';
import { JobRepository } from '../../lib/engine/job-repository.ts';
import { InMemoryJobStore } from '../../lib/memory/memory-jobs.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const TICK_S = 60;

/** The scan queue: requests wait one second, then a scanner takes each up. */
class DelayedScanQueue implements ScanQueue {
  readonly requests: { shard: number; at: number }[] = [];

  constructor(private readonly clock: ManualClock) {}

  async send(requests: readonly ScanRequest[]): Promise<void> {
    for (const request of requests) this.requests.push({ shard: request.shard, at: this.clock.now() + 1000 });
  }

  async hide(): Promise<void> {}

  due(now: number): number[] {
    const due = this.requests.filter((request) => request.at <= now);
    this.requests.splice(0, this.requests.length, ...this.requests.filter((request) => request.at > now));
    return due.map((request) => request.shard);
  }
}

interface Rig {
  readonly engine: MemoryEngine;
  readonly clock: ManualClock;
  readonly jobs: JobRepository;
  /** Runs the installation second by second to `toSecond` (from T0), doing `at[second]` first in its second. */
  run(toSecond: number, at: Record<number, () => Promise<unknown>>): Promise<void>;
  /** Start lag (ms) of each run of `jobId`, by its scheduled second from T0. */
  lags(jobId: string): Record<number, number>;
}

function rig(): Rig {
  const clock = new ManualClock(T0);
  const engine = createMemoryEngine(clock);
  const scans = new DelayedScanQueue(clock);
  const jobs = new JobRepository({
    jobs: new InMemoryJobStore(engine.tables),
    reader: engine.jobReader,
    slices: engine.slices,
    wheel: engine.wheel,
    clock,
    shardCount: engine.tables.shardCount,
    scans,
  });
  const scanner = engine.scanner('scanner', { lookaheadMs: 120_000 });
  const worker = engine.worker('worker');
  let second = 0;
  return {
    engine,
    clock,
    jobs,
    async run(toSecond, at) {
      for (; second <= toSecond; second++) {
        clock.set(T0 + second * 1000);
        await at[second]?.();
        if (second % TICK_S === 0) await scans.send([{ shard: 0 }]);
        for (const shard of scans.due(clock.now())) await scanner.scanShard(shard);
        await engine.drain(worker);
      }
    },
    lags: (jobId) =>
      Object.fromEntries(
        engine.events
          .ofType('started')
          .filter((event) => event.jobId === jobId)
          .map((event) => [(Date.parse(event.scheduledAt) - T0) / 1000, event.startLagMs ?? -1]),
      ),
  };
}

describe('a change is picked up within a second or two, not at the next tick', () => {
  it('a */10 s job put at :18 runs :20 on time', async () => {
    const { engine, run, jobs, lags } = rig();
    // Only its handler, under another job that never runs.
    await engine.register({ id: 'handler-only', enabled: false }, async () => {});
    await run(70, { 18: () => jobs.put({ id: 'new', schedule: '*/10 * * * * *', handler: 'handler-only' }) });
    expect(lags('new')).toEqual({ 20: 0, 30: 0, 40: 0, 50: 0, 60: 0, 70: 0 });
  });

  it('a resume at :33 runs :40 on time', async () => {
    const { engine, run, jobs, lags } = rig();
    await engine.register({ id: 'resumed', schedule: '*/10 * * * * *', enabled: false }, async () => {});
    await run(59, { 33: () => jobs.resume('resumed') });
    expect(lags('resumed')).toEqual({ 40: 0, 50: 0 });
  });

  it('a timed pause at :25 until :43, before the next tick: :50 runs on time', async () => {
    const { engine, run, jobs, lags } = rig();
    await engine.register({ id: 'paused', schedule: '*/10 * * * * *' }, async () => {});
    await run(59, { 25: () => jobs.pause('paused', { actor: 'ops', reason: 'maintenance', until: T0 + 43_000 }) });
    // :00 waits for the tick's scan (delivered a second after it); :30 and :40 are paused; :50 runs before the next
    // tick. Not at once: the tick's scan had sent :50 of the paused generation (120 s ahead), whose claim at :50 holds
    // the instant until the worker reads that the job moved on, and the new generation's message, its claim lost to a
    // live lease, is hidden for the lease and the skew margin (docs/architecture/messages.md, "A change is picked up promptly").
    const lag = lags('paused');
    expect(Object.keys(lag).map(Number)).toEqual([0, 10, 20, 50]);
    expect(lag).toMatchObject({ 0: 1000, 10: 0, 20: 0 });
    expect(lag[50]).toBeLessThanOrEqual(8000);
  });
});
