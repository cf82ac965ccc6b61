/**
 * Two scanners whose clocks are 4 s apart (each within the promised ±2 s) take up one inbox entry of a job back from
 * an outage longer than its catch-up window, under misfire `none`, with an occurrence between their two window starts:
 * each plans a MISSED range up to its own window start, and a misfire range from its own first occurrence inside the
 * window. The ranges start at different occurrences, so both scans' records could be written. Whichever scan records
 * first, every occurrence must end up in exactly one recorded range or be sent, never both.
 */
import { describe, expect, it } from 'vitest';
import { racingScanNow } from '../../lib/core/bucket-plan.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';
import { raceTwoScanners } from '../support/scanner-rig.ts';

const SCHEDULE = { cron: 'rate(30 seconds)', timeZone: 'UTC' };
/** A `rate(30 seconds)` occurrence, one catch-up window (longer than the misfire threshold) before the scans: the clocks disagree on whether it is missed. */
const O = Date.parse('2026-06-01T12:00:30Z');
const WINDOW_MS = 120_000;
const SCAN_AT = O + WINDOW_MS;
const SKEW_MS = 2000;
const OUTAGE_MS = 240_000;

interface Recorded {
  readonly from: number;
  readonly until: number;
  readonly status: string;
}

async function race(first: 'ahead' | 'behind'): Promise<{ sent: Set<number>; recorded: Recorded[]; outageFrom: number }> {
  const clock = new ManualClock(SCAN_AT - OUTAGE_MS);
  const engine = createMemoryEngine(clock);
  const job = await engine.register(
    { id: 'windowed', schedule: 'rate(30 seconds)', policies: { misfire: 'none', catchUpWindowMs: WINDOW_MS } },
    async () => {},
  );
  clock.set(SCAN_AT);
  const sent = await raceTwoScanners(engine, clock, first, SKEW_MS);
  const recorded: Recorded[] = [];
  for (const at of occurrencesBetween(SCHEDULE, job.nextFireAt, SCAN_AT + 60_000, 100)) {
    const slice = await engine.slices.get({ jobId: 'windowed', scheduledAt: at });
    if (slice?.status === SliceStatus.Missed || slice?.status === SliceStatus.Skipped)
      recorded.push({ from: at, until: slice.missedUntil ?? at, status: slice.status });
  }
  return { sent: new Set(sent.map((message) => message.scheduledAt)), recorded, outageFrom: job.nextFireAt };
}

describe('racing scans of a job back from an outage longer than its catch-up window, their clocks 4 s apart', () => {
  for (const first of ['ahead', 'behind'] as const) {
    it(`puts every occurrence in one recorded range or sends it, never both (the scanner ${first} records first)`, async () => {
      const { sent, recorded, outageFrom } = await race(first);
      const fates = occurrencesBetween(SCHEDULE, outageFrom, SCAN_AT + 60_000, 100).map((at) => {
        const ranges = recorded.filter((range) => range.from <= at && at < range.until).map((range) => range.status);
        return `${new Date(at).toISOString()} ${[...ranges, ...(sent.has(at) ? ['sent'] : [])].join('+') || 'nothing'}`;
      });
      expect(fates.filter((fate) => !/ (MISSED|SKIPPED|sent)$/.test(fate))).toEqual([]);
      expect(recorded.map((range) => range.status).sort()).toEqual([SliceStatus.Missed, SliceStatus.Skipped]);
    });
  }
});

describe('racingScanNow', () => {
  const job = { policies: { catchUpWindowMs: WINDOW_MS } } as unknown as StoredJob;
  const missed = { count: 4, from: O - 90_000, to: O - SKEW_MS };

  it('gives the racing scan’s now from its MISSED end, when the two clocks are within the promised skew', () => {
    expect(racingScanNow(job, missed, O + SKEW_MS)).toBe(O + SKEW_MS + WINDOW_MS);
    expect(racingScanNow(job, { ...missed, to: O + SKEW_MS }, O - SKEW_MS)).toBe(O - SKEW_MS + WINDOW_MS);
  });

  it('gives nothing for the same end (planned alike) or one further off than two clocks may be (no racing scan’s)', () => {
    expect(racingScanNow(job, missed, missed.to)).toBeUndefined();
    expect(racingScanNow(job, missed, missed.to + 4001)).toBeUndefined();
    expect(racingScanNow(job, missed, missed.to - 60_000)).toBeUndefined();
  });
});
