/**
 * The real Scanner over one job, a manual clock stepped a minute at a time,
 * and the smallest fakes of its ports: every occurrence across a DST change
 * becomes exactly one slice, and none is reported missed.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { LifecycleEvent } from '../../lib/core/events.ts';
import type { StoredJob, WorkMessage } from '../../lib/core/ports.ts';
import { nextOccurrenceAtOrAfter } from '../../lib/core/schedule.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import { DST_CASES, SHIFT_ONCE, type DstCase } from '../support/dst-cases.ts';
import { fakeJob, FakeScheduleStore, noSweeps, recordingQueue } from '../support/fake-schedule-store.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

function jobOf(dstCase: Pick<DstCase, 'cron' | 'timeZone' | 'dst'>, nextFireAt: number): StoredJob {
  return fakeJob({ id: 'dst-job', cron: dstCase.cron, timeZone: dstCase.timeZone, dst: dstCase.dst }, nextFireAt);
}

async function scanMinuteByMinute(store: FakeScheduleStore, fromMs: number, toMs: number, lookaheadMs: number) {
  const clock = new ManualClock(fromMs);
  const events: LifecycleEvent[] = [];
  const sent: WorkMessage[] = [];
  const scanner = new Scanner({
    scannerId: 'scanner-1',
    schedules: store,
    slices: noSweeps,
    queue: recordingQueue(sent),
    events: { emit: (event) => void events.push(event) },
    clock,
    lookaheadMs,
    sweepGraceMs: 30_000,
  });
  for (; clock.now() < toMs + 60_000; clock.advance(60_000)) await scanner.scanShard(0);
  return { events, sent };
}

describe('Scanner, minute by minute across the 2026 DST changes', () => {
  describe.each([120_000, 10_000, 900_000])('lookahead %i ms', (lookaheadMs) => {
    it.each(DST_CASES)('$name', async (dstCase) => {
      const from = Date.parse(dstCase.from);
      const to = Date.parse(dstCase.to);
      const schedule = { cron: dstCase.cron, timeZone: dstCase.timeZone, dst: dstCase.dst };
      const store = new FakeScheduleStore([jobOf(dstCase, nextOccurrenceAtOrAfter(schedule, from) as number)]);
      const { events, sent } = await scanMinuteByMinute(store, from, to, lookaheadMs);
      expect(store.created.filter((at) => at < to).map(iso)).toEqual(dstCase.expected);
      expect(new Set(store.created).size).toBe(store.created.length);
      expect(sent.map((message) => message.scheduledAt)).toEqual(store.created);
      expect(events.filter((event) => event.type === 'missed')).toEqual([]);
    });
  });

  it('a job re-created inside the repeated hour (second pass) does not re-run 01:20 and 01:40 (America/New_York, once)', async () => {
    const schedule = { cron: '*/20 1 * * *', timeZone: 'America/New_York', dst: SHIFT_ONCE };
    const dayStart = Date.parse('2026-11-01T04:00:00Z');
    const recreatedAt = Date.parse('2026-11-01T06:10:00Z'); // 01:10 EST
    const first = new FakeScheduleStore([jobOf(schedule, nextOccurrenceAtOrAfter(schedule, dayStart) as number)]);
    await scanMinuteByMinute(first, dayStart, recreatedAt - 60_000, 120_000);
    const second = new FakeScheduleStore([jobOf(schedule, nextOccurrenceAtOrAfter(schedule, recreatedAt) as number)]);
    await scanMinuteByMinute(second, recreatedAt, Date.parse('2026-11-02T12:00:00Z'), 120_000);
    expect(first.created.map(iso)).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T05:20:00.000Z', '2026-11-01T05:40:00.000Z']);
    expect(second.created.filter((at) => at < Date.parse('2026-11-02T12:00:00Z')).map(iso)).toEqual([
      '2026-11-02T06:00:00.000Z',
      '2026-11-02T06:20:00.000Z',
      '2026-11-02T06:40:00.000Z',
    ]);
  });
});
