/**
 * The real Scanner over the in-memory stores with one job, a manual clock
 * stepped a minute at a time, and a worker draining what is due before each
 * scan: every occurrence across a DST change is sent exactly once (the
 * reconciler finds each claimed, so it sends nothing again), and none is
 * reported missed.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { DstPolicy } from '../../lib/core/schedule.ts';
import { DST_CASES, SHIFT_ONCE } from '../support/dst-cases.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';
import { recordingQueue, scannerOver, type SentMessage } from '../support/scanner-rig.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const JOB = 'dst-job';

interface DstJob {
  readonly cron: string;
  readonly timeZone: string;
  readonly dst: DstPolicy;
}

/** The job put at the clock's time, as the product does (its first occurrence is the one at or after it). */
async function register(engine: MemoryEngine, job: DstJob): Promise<void> {
  await engine.register({ id: JOB, schedule: job.cron, timeZone: job.timeZone, dst: job.dst }, async () => {});
}

/** From the clock's time until past `toMs`: drain what is due, then scan; a minute at a time. */
async function scanMinuteByMinute(
  engine: MemoryEngine,
  clock: ManualClock,
  toMs: number,
  lookaheadMs: number,
  sent: SentMessage[],
): Promise<void> {
  const scanner = scannerOver(engine, 'scanner-1', {
    lookaheadMs,
    sweepGraceMs: 30_000,
    queue: recordingQueue(engine.workQueue, clock, sent),
  });
  const worker = engine.worker('worker-1');
  // Drained first: what the last scan sent is claimed before this scan reconciles it.
  for (; clock.now() < toMs + 60_000; clock.advance(60_000)) {
    await engine.drain(worker);
    await scanner.scanShard(0);
  }
}

describe('Scanner, minute by minute across the 2026 DST changes', () => {
  describe.each([120_000, 10_000, 900_000])('lookahead %i ms', (lookaheadMs) => {
    it.each(DST_CASES)('$name', async (dstCase) => {
      const to = Date.parse(dstCase.to);
      const clock = new ManualClock(Date.parse(dstCase.from));
      const engine = createMemoryEngine(clock);
      await register(engine, dstCase);
      const sent: SentMessage[] = [];
      await scanMinuteByMinute(engine, clock, to, lookaheadMs, sent);
      const instants = sent.map((message) => message.scheduledAt);
      expect(instants.filter((at) => at < to).map(iso)).toEqual(dstCase.expected);
      expect(new Set(instants).size).toBe(instants.length);
      // Each names its generation (and no definition): the claim creates the slice from the stored one.
      expect(sent.every((message) => message.generation === 1)).toBe(true);
      expect(engine.events.ofType('missed')).toEqual([]);
      expect(engine.errors).toEqual([]);
    });
  });

  it('a job re-created inside the repeated hour (second pass) does not re-run 01:20 and 01:40 (America/New_York, once)', async () => {
    const job = { cron: '*/20 1 * * *', timeZone: 'America/New_York', dst: SHIFT_ONCE };
    const recreatedAt = Date.parse('2026-11-01T06:10:00Z'); // 01:10 EST
    const end = Date.parse('2026-11-02T12:00:00Z');
    const clock = new ManualClock(Date.parse('2026-11-01T04:00:00Z'));
    const engine = createMemoryEngine(clock);
    await register(engine, job);
    const sent: SentMessage[] = [];
    await scanMinuteByMinute(engine, clock, recreatedAt - 120_000, 120_000, sent);
    clock.set(recreatedAt);
    await engine.jobs().delete(JOB);
    await engine.jobs().put({ id: JOB, schedule: job.cron, timeZone: job.timeZone, dst: job.dst, handler: JOB });
    await scanMinuteByMinute(engine, clock, end, 120_000, sent);
    const ofGeneration = (generation: number): string[] =>
      sent.filter((message) => message.generation === generation && message.scheduledAt < end).map((message) => iso(message.scheduledAt));
    expect(ofGeneration(1)).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T05:20:00.000Z', '2026-11-01T05:40:00.000Z']);
    // Generation 2 is the tombstone; the re-created job is generation 3.
    expect(ofGeneration(3)).toEqual(['2026-11-02T06:00:00.000Z', '2026-11-02T06:20:00.000Z', '2026-11-02T06:40:00.000Z']);
    expect(sent.filter((message) => message.scheduledAt < end)).toHaveLength(6);
  });
});
