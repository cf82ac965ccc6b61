/**
 * Is a second an occurrence of the job's current generation (the only place a
 * work message may make a worker create a slice)? Answered with the project's
 * schedule code (cron-parser for crons), for every schedule kind, in a zone
 * across a DST change, with jitter (the slot stays the nominal second), and
 * for paused jobs and seconds before the generation began.
 */
import { describe, expect, it } from 'vitest';
import { LATE_CLAIM_TOLERANCE_MS, lateClaim, MISFIRE_THRESHOLD_MS } from '../../lib/core/advance-plan.ts';
import { notAnOccurrence, planClaim } from '../../lib/core/claim-plan.ts';
import { parseJobSpec, type JobSpecInput } from '../../lib/core/job-spec.ts';
import { planDelete, planPause, planPut } from '../../lib/core/job-lifecycle.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';

const NOW = Date.parse('2026-03-01T00:00:00Z');

function stored(input: Partial<JobSpecInput>, now = NOW): StoredJob {
  return planPut(parseJobSpec({ id: 'j', handler: 'h', schedule: '* * * * *', ...input }), undefined, now, 4)!.next;
}

describe('notAnOccurrence', () => {
  it('a cron in a zone, across spring forward: the shifted 02:30 is one, the wall time it replaces is not', () => {
    const job = stored({ schedule: '0 30 2 * * *', timeZone: 'America/New_York' });
    // 2026-03-08 02:30 does not exist in New York: shifted to 03:30 EDT = 07:30Z.
    expect(notAnOccurrence(job, Date.parse('2026-03-08T07:30:00Z'))).toBeUndefined();
    expect(notAnOccurrence(job, Date.parse('2026-03-07T07:30:00Z'))).toBeUndefined();
    expect(notAnOccurrence(job, Date.parse('2026-03-08T06:30:00Z'))).toMatch(
      /is not an occurrence of generation 1 \(schedule "0 30 2 \* \* \*" in America\/New_York\)/,
    );
    expect(notAnOccurrence(job, Date.parse('2026-03-07T07:30:01Z'))).toMatch(/not an occurrence/);
  });

  it('rate(...) is epoch-anchored; at(...) is its one instant', () => {
    const rate = stored({ schedule: 'rate(5 minutes)' });
    expect(notAnOccurrence(rate, Date.parse('2026-03-02T10:05:00Z'))).toBeUndefined();
    expect(notAnOccurrence(rate, Date.parse('2026-03-02T10:06:00Z'))).toMatch(/not an occurrence/);
    const once = stored({ schedule: 'at(2026-03-02T09:00:00)', timeZone: 'Asia/Kolkata' });
    expect(notAnOccurrence(once, Date.parse('2026-03-02T03:30:00Z'))).toBeUndefined();
    expect(notAnOccurrence(once, Date.parse('2026-03-03T03:30:00Z'))).toMatch(/not an occurrence/);
  });

  it('jitter moves the start, never the slot: the nominal second is the occurrence', () => {
    const job = stored({ schedule: '0 * * * * *', jitter: '90s' });
    expect(notAnOccurrence(job, Date.parse('2026-03-02T10:05:00Z'))).toBeUndefined();
    expect(notAnOccurrence(job, Date.parse('2026-03-02T10:05:30Z'))).toMatch(/not an occurrence/);
  });

  it('before the generation began, or while the job is paused, no second is an occurrence', () => {
    const job = stored({ schedule: '0 * * * * *' });
    expect(notAnOccurrence(job, NOW - 60_000)).toMatch(/is before generation 1's first occurrence \(2026-03-01T00:00:00Z\)/);
    const paused = planPause(job, NOW + 5000)!.next;
    expect(notAnOccurrence(paused, NOW + 60_000)).toMatch(/job "j" is paused in generation 2/);
    const until = NOW + 3_600_000;
    const timed = planPause(job, NOW + 5000, { until, actor: 'ops', reason: 'maintenance', at: NOW + 5000 })!.next;
    expect(notAnOccurrence(timed, until - 60_000)).toMatch(/paused/);
    expect(notAnOccurrence(timed, until)).toBeUndefined();
    expect(notAnOccurrence(stored({ enabled: false }), NOW + 60_000)).toMatch(/disabled/);
  });

  it('a stored schedule that no longer parses is named, not thrown', () => {
    const job = { ...stored({}), schedule: '61 * * * *' };
    expect(notAnOccurrence(job, NOW + 60_000)).toMatch(/stored schedule does not parse/);
  });
});

describe('planClaim', () => {
  const key = (scheduledAt: number) => ({ jobId: 'j', scheduledAt });

  it('creates from the stored definition only at an occurrence of the current generation', () => {
    const job = { ...stored({ schedule: '0 * * * * *', payload: { a: 1 } }), generation: 3 };
    expect(planClaim(job, key(NOW + 60_000), 3)).toEqual({
      kind: 'create',
      run: { generation: 3, handler: 'h', policies: job.policies, payload: { a: 1 }, shard: job.shard },
    });
    expect(planClaim(job, key(NOW + 61_000), 3)).toEqual({
      kind: 'existing',
      ifMissing: { refusal: expect.stringMatching(/not an occurrence/) },
    });
  });

  it('an older generation claims only what is on record and is dropped when nothing is; a newer one is refused', () => {
    const job = { ...stored({}), generation: 3 };
    expect(planClaim(job, key(NOW + 60_000), 2)).toEqual({ kind: 'existing', ifMissing: 'drop' });
    expect(planClaim(planDelete(job, NOW).next, key(NOW + 60_000), 3)).toEqual({ kind: 'existing', ifMissing: 'drop' });
    expect(planClaim(job, key(NOW + 60_000), 4)).toEqual({ kind: 'refuse', refusal: 'generation 4 is newer than job "j"\'s (3)' });
    expect(planClaim(undefined, key(NOW + 60_000), 1)).toEqual({ kind: 'existing', ifMissing: { refusal: 'no job "j" is stored' } });
  });
});

describe("lateClaim (the scan's catch-up and misfire rule, measured from the start)", () => {
  const schedule = { cron: '*/10 * * * * *', timeZone: 'UTC' };
  const at = Date.parse('2026-03-02T10:00:00Z');
  const judge = (lateMs: number, catchUpWindowMs: number, misfire?: 'all' | 'latest' | 'none', offsetMs = 0) =>
    lateClaim({ schedule, scheduledAt: at, startAt: at + offsetMs, now: at + offsetMs + lateMs, catchUpWindowMs, misfire });

  it("past the window: missed, whatever the misfire policy; a window under the clocks' skew still runs a claim on time", () => {
    expect(judge(91_000, 90_000, 'all')).toBe('missed');
    expect(judge(90_000, 90_000, 'all')).toBeUndefined();
    expect(judge(LATE_CLAIM_TOLERANCE_MS, 0)).toBeUndefined();
    expect(judge(LATE_CLAIM_TOLERANCE_MS + 1, 0)).toBe('missed');
  });

  it('inside the window, a minute late or less is not a misfire; more: none skips, latest skips unless no later occurrence is due, all runs', () => {
    expect(judge(MISFIRE_THRESHOLD_MS, 600_000, 'none')).toBeUndefined();
    expect(judge(MISFIRE_THRESHOLD_MS + 1000, 600_000, 'none')).toBe('misfire');
    expect(judge(MISFIRE_THRESHOLD_MS + 1000, 600_000, 'latest')).toBe('misfire');
    expect(judge(MISFIRE_THRESHOLD_MS + 1000, 600_000, 'all')).toBeUndefined();
    expect(judge(MISFIRE_THRESHOLD_MS + 1000, 600_000)).toBeUndefined();
    // A yearly schedule: no later occurrence is due, so under latest this one is the latest and runs.
    const yearly = { cron: '0 0 10 2 3 *', timeZone: 'UTC' };
    expect(
      lateClaim({ schedule: yearly, scheduledAt: at, startAt: at, now: at + 120_000, catchUpWindowMs: 600_000, misfire: 'latest' }),
    ).toBeUndefined();
  });

  it('jitter: lateness counts from the start; a later occurrence is due once its own start has come', () => {
    expect(judge(1000, 0, 'none', 45_000)).toBeUndefined();
    // 65 s after a start 5 s past the second: the next occurrence (10 s later) started 55 s ago: due, so latest skips.
    expect(judge(65_000, 600_000, 'latest', 5000)).toBe('misfire');
  });
});
