/**
 * Two scanners whose clocks are 4 s apart (each within the promised ±2 s)
 * take up one inbox entry of jobs back from an outage, under `none` and
 * `latest`, with an occurrence between their two clocks: each plans its own
 * misfire range, one records it first. Whichever does, no occurrence the
 * recorded range covers may be sent, and every one after it must be.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import type { MisfirePolicy } from '../../lib/core/job-spec.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';
import { raceTwoScanners, type SentMessage } from '../support/scanner-rig.ts';

/** A `rate(30 seconds)` occurrence (a multiple of 30 s since the epoch); the scans come a second after it. */
const O = Date.parse('2026-06-01T12:00:30Z');
const SCAN_AT = O + 1000;
const SKEW_MS = 2000;
const OUTAGE_MS = 150_000;
const POLICIES: readonly MisfirePolicy[] = ['none', 'latest'];

async function race(
  first: 'ahead' | 'behind',
): Promise<{ sent: SentMessage[]; ranges: Map<MisfirePolicy, { from: number; until: number }> }> {
  const clock = new ManualClock(SCAN_AT - OUTAGE_MS);
  const engine = createMemoryEngine(clock);
  const outageFrom = new Map<MisfirePolicy, number>();
  for (const misfire of POLICIES) {
    const job = await engine.register({ id: `misfire-${misfire}`, schedule: 'rate(30 seconds)', policies: { misfire } }, async () => {});
    outageFrom.set(misfire, job.nextFireAt);
  }
  clock.set(SCAN_AT);
  const sent = await raceTwoScanners(engine, clock, first, SKEW_MS);
  const ranges = new Map<MisfirePolicy, { from: number; until: number }>();
  for (const misfire of POLICIES) {
    const from = outageFrom.get(misfire) ?? 0;
    const range = await engine.slices.get({ jobId: `misfire-${misfire}`, scheduledAt: from });
    expect(range, misfire).toMatchObject({ status: SliceStatus.Skipped, skipReason: 'misfire' });
    ranges.set(misfire, { from, until: range?.missedUntil ?? from });
  }
  return { sent, ranges };
}

describe('racing scans of a job back from an outage, their clocks 4 s apart', () => {
  for (const first of ['ahead', 'behind'] as const) {
    it(`sends nothing the recorded misfire range covers and everything after it (the scanner ${first} records first)`, async () => {
      const { sent, ranges } = await race(first);
      for (const misfire of POLICIES) {
        const { from, until } = ranges.get(misfire) ?? { from: 0, until: 0 };
        const sentAt = new Set(sent.filter((message) => message.jobId === `misfire-${misfire}`).map((message) => message.scheduledAt));
        const covered = occurrencesBetween({ cron: 'rate(30 seconds)', timeZone: 'UTC' }, from, until, 100);
        expect(
          covered.filter((at) => sentAt.has(at)).map((at) => new Date(at).toISOString()),
          misfire,
        ).toEqual([]);
        const after = occurrencesBetween({ cron: 'rate(30 seconds)', timeZone: 'UTC' }, until, SCAN_AT + 60_000, 100);
        expect(
          after.filter((at) => !sentAt.has(at)).map((at) => new Date(at).toISOString()),
          misfire,
        ).toEqual([]);
      }
      // The clocks disagree on O: the range the scanner ahead records covers it under `none`; under `latest` it ran.
      const recordedByAhead = first === 'ahead';
      expect(ranges.get('none')?.until).toBe(recordedByAhead ? SCAN_AT + SKEW_MS : SCAN_AT - SKEW_MS);
      expect(ranges.get('latest')?.until).toBe(recordedByAhead ? O : O - 30_000);
    });
  }
});
