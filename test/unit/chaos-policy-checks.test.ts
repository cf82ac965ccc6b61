/**
 * The drill's schedule-policy checks on hand-made histories: an occurrence
 * in a misfire range is skipped by policy only under a policy that skips,
 * each policy skips exactly what it says, rate and at schedules are
 * enumerated apart from the engine, and a one-time job ends as its policy says.
 */
import { describe, expect, it } from 'vitest';
import { cronParserOccurrences, expectedOccurrences, zonedInstant } from '../../tools/chaos/expected.ts';
import { checkHistory, type HistoryInput, type ObservedEvent } from '../../tools/chaos/history.ts';
import { checkOverlapRuns, checkPolicies, type OutageJob, type PolicyCheckInput } from '../../tools/chaos/policy-checks.ts';
import { lifecycleEvent, type LifecycleEventType } from '../../lib/core/events.ts';
import { NEVER } from '../../lib/core/job-lifecycle.ts';
import { DEFAULT_DST_POLICY } from '../../lib/core/schedule.ts';
import { DEFAULT_POLICIES, type MisfirePolicy } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import type { Slice } from '../../lib/core/slice.ts';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const s = (seconds: number): number => T0 + seconds * 1000;
const RATE_10 = { schedule: 'rate(10 seconds)', timeZone: 'UTC', enabled: true };

function slice(jobId: string, at: number, status: Slice['status'], extra: Partial<Slice> = {}): Slice {
  return {
    jobId,
    scheduledAt: at,
    status,
    fence: 1,
    attempts: 1,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 1,
    createdAt: T0,
    ...extra,
  };
}

const misfireRange = (jobId: string, from: number, until: number, count: number): Slice =>
  slice(jobId, from, 'SKIPPED', { skipReason: 'misfire', missedUntil: until, missedCount: count, fence: 0, attempts: 0 });

function outage(jobId: string, misfire: MisfirePolicy): OutageJob {
  return { jobId, misfire, definition: RATE_10, outageFrom: s(0), simulatedAt: s(55) };
}

const base = (slices: Slice[], outages: OutageJob[]): PolicyCheckInput => ({
  slices,
  outages,
  startedAt: s(60),
  enumerate: cronParserOccurrences,
  oneTime: [],
});
const ran = (jobId: string, ...seconds: number[]): Slice[] => seconds.map((second) => slice(jobId, s(second), 'SUCCEEDED'));

describe('rate and at, enumerated apart from the engine', () => {
  it('rate: multiples of the interval since the epoch; at: the local time through Intl', () => {
    expect(cronParserOccurrences(RATE_10, s(-5), s(21))).toEqual([s(0), s(10), s(20)]);
    expect(zonedInstant('2026-12-24T18:00:00', 'Europe/Berlin')).toBe(Date.parse('2026-12-24T17:00:00Z'));
    expect(
      cronParserOccurrences({ schedule: 'at(2026-06-01T09:00:00)', timeZone: 'Asia/Kolkata', enabled: true }, 0, Number.MAX_SAFE_INTEGER),
    ).toEqual([Date.parse('2026-06-01T03:30:00Z')]);
  });
});

describe('misfire policies', () => {
  it('latest: the range up to the latest due occurrence, which ran, passes; one that ran inside the range does not', () => {
    const good = [misfireRange('L', s(0), s(50), 5), ...ran('L', 50, 60)];
    expect(checkPolicies(base(good, [outage('L', 'latest')]))).toEqual([]);
    const ranInside = [...good, ...ran('L', 20)];
    expect(checkPolicies(base(ranInside, [outage('L', 'latest')]))).toEqual([
      'L (misfire latest): 1 occurrences inside the skipped range ran',
    ]);
    const early = [misfireRange('L', s(0), s(30), 3), ...ran('L', 30, 40, 50)];
    expect(checkPolicies(base(early, [outage('L', 'latest')]))).toEqual([
      "L (misfire latest): the range ends at 2026-11-29T12:00:30Z, before the outage's last occurrence 2026-11-29T12:00:50Z",
    ]);
  });

  it('none: a range to the first scan, nothing in it run; a wrong count is named', () => {
    expect(checkPolicies(base([misfireRange('N', s(0), s(61), 7), ...ran('N', 70)], [outage('N', 'none')]))).toEqual([]);
    expect(checkPolicies(base([misfireRange('N', s(0), s(61), 6)], [outage('N', 'none')]))).toEqual([
      'N (misfire none): the range counts 6 occurrences; it covers 7',
    ]);
    expect(checkPolicies(base([], [outage('N', 'none')]))).toEqual(['N (misfire none): 0 misfire ranges; expected exactly one']);
  });

  it('none: a range ending at the whole second of a first scan whose clock is the skew behind is no violation; earlier is', () => {
    // A LocalStack CI drill: set up at 24.3 s; the first scan's clock read 22.27 s (1.95 s behind) and the range ended at 22 s.
    const setUpAt = { ...outage('N', 'none'), simulatedAt: s(24) + 300 };
    expect(checkPolicies(base([misfireRange('N', s(0), s(22), 3), ...ran('N', 30)], [setUpAt]))).toEqual([]);
    expect(checkPolicies(base([misfireRange('N', s(0), s(21), 3), ...ran('N', 30)], [setUpAt]))).toEqual([
      'N (misfire none): the range ends at 2026-11-29T12:00:21Z, before the outage was set up (2026-11-29T12:00:24Z)',
    ]);
  });

  it('all: every occurrence of the outage ran and nothing was skipped; a misfire range on another job is a violation', () => {
    expect(checkPolicies(base(ran('A', 0, 10, 20, 30, 40, 50), [outage('A', 'all')]))).toEqual([]);
    expect(checkPolicies(base(ran('A', 0, 10, 20, 30, 50), [outage('A', 'all')]))).toEqual([
      'A (misfire all): 1 occurrences of the outage did not run, first 2026-11-29T12:00:40Z',
    ]);
    expect(checkPolicies(base([misfireRange('other', s(0), s(10), 1)], []))).toEqual([
      'other: a misfire range at 2026-11-29T12:00:00Z on a job that had no outage',
    ]);
  });

  it('the per-occurrence verdict: skipped by policy under latest or none, missed under all', () => {
    const expected = expectedOccurrences(
      [{ jobId: 'N', changes: [{ kind: 'create', at: s(0), generation: 1, definition: RATE_10 }] }],
      s(0),
      s(30),
    );
    const input: HistoryInput = {
      events: [],
      renewals: [],
      processFaults: [],
      slices: [misfireRange('N', s(0), s(30), 3)],
      ledger: [],
      effects: [],
      expected,
    };
    const skipping = checkHistory({ ...input, misfireOf: new Map([['N', 'none']]) });
    expect([skipping.skippedByPolicy, skipping.missed]).toEqual([3, []]);
    const all = checkHistory({ ...input, misfireOf: new Map([['N', 'all']]) });
    expect([all.skippedByPolicy, all.missed.length]).toEqual([0, 3]);
  });
});

describe('one-time jobs', () => {
  const stored = (id: string, nextFireAt: number, schedule = 'at(2026-11-29T12:00:10)'): StoredJob => ({
    id,
    schedule,
    timeZone: 'UTC',
    dst: DEFAULT_DST_POLICY,
    handler: 'h',
    enabled: true,
    policies: DEFAULT_POLICIES,
    shard: 0,
    nextFireAt,
    version: 2,
    generation: 1,
    createdAt: T0,
    updatedAt: T0,
  });

  it('ran once, then kept completed or deleted', () => {
    const slices = [...ran('keep', 10), ...ran('gone', 10)];
    const tombstone = { id: 'gone', deleted: true as const, generation: 2, version: 3, updatedAt: s(11) };
    // The record as the put left it (no scan writes a job): its one occurrence, and none after it.
    const oneTime = [
      { jobId: 'keep', afterOneTime: 'complete' as const, record: stored('keep', s(10)) },
      { jobId: 'gone', afterOneTime: 'delete' as const, record: tombstone },
    ];
    expect(checkPolicies({ ...base(slices, []), oneTime })).toEqual([]);
    // A record that fires again after its slot (every minute at :10) is not a completed one-time job.
    const wrong = [
      { jobId: 'keep', afterOneTime: 'complete' as const, record: stored('keep', s(10), '10 * * * * *') },
      { jobId: 'gone', afterOneTime: 'delete' as const, record: stored('gone', NEVER) },
    ];
    expect(checkPolicies({ ...base([...slices, ...ran('keep', 70)], []), oneTime: wrong })).toEqual([
      'keep: 2 slices (SUCCEEDED, SUCCEEDED); expected one that ran',
      'keep: not kept as completed (never firing again) after its run',
      'gone: still stored after its run; afterOneTime is delete',
    ]);
  });
});

describe('overlap runs (skip, bufferOne)', () => {
  const event = (type: LifecycleEventType, second: number, key: number, replica = 'w1', fence = 1): ObservedEvent => ({
    replica,
    offsetMs: 0,
    event: lifecycleEvent(type, { jobId: 'O', scheduledAt: s(key) }, s(second), { fence, worker: replica }),
  });
  const run = (key: number, from: number, to: number, replica = 'w1'): ObservedEvent[] => [
    event('claimed', from, key, replica),
    event('started', from, key, replica),
    event('committed', to, key, replica),
  ];
  const overlapOf = new Map([['O', 'skip' as const]]);

  it('a run that started while a committed one still ran, claims well apart, is named; back to back is fine', () => {
    expect(checkOverlapRuns({ events: [...run(0, 0, 6), ...run(5, 5, 9, 'w2')], processFaults: [], overlapOf })).toEqual([
      'O (overlap skip): O:2026-11-29T12:00:05Z started while O:2026-11-29T12:00:00Z was still running',
    ]);
    expect(checkOverlapRuns({ events: [...run(0, 0, 4), ...run(5, 5, 9, 'w2')], processFaults: [], overlapOf })).toEqual([]);
    // A start within a commit reply of the earlier run's committed event: its gate may have read that commit landed.
    expect(checkOverlapRuns({ events: [...run(0, 0, 5.3), ...run(5, 5, 9, 'w2')], processFaults: [], overlapOf })).toEqual([]);
  });

  it('claims within the clock-skew tolerance, a paused holder, or an allow job are not flagged', () => {
    expect(checkOverlapRuns({ events: [...run(0, 0, 6), ...run(5, 3, 9, 'w2')], processFaults: [], overlapOf })).toEqual([]);
    const paused = [{ kind: 'pause' as const, replica: 'w1', at: s(1), until: s(5.5) }];
    expect(checkOverlapRuns({ events: [...run(0, 0, 6), ...run(5, 5, 9, 'w2')], processFaults: paused, overlapOf })).toEqual([]);
    expect(
      checkOverlapRuns({
        events: [...run(0, 0, 6), ...run(5, 5, 9, 'w2')],
        processFaults: [],
        overlapOf: new Map([['O', 'allow' as const]]),
      }),
    ).toEqual([]);
  });

  it("an overlap or replaced skip counts as the policy's only under the policy that gives it", () => {
    const expected = expectedOccurrences(
      [{ jobId: 'O', changes: [{ kind: 'create', at: s(0), generation: 1, definition: RATE_10 }] }],
      s(0),
      s(20),
    );
    const slices = [slice('O', s(0), 'SUCCEEDED'), slice('O', s(10), 'SKIPPED', { skipReason: 'overlap' })];
    const input: HistoryInput = { events: [], renewals: [], processFaults: [], slices, ledger: [], effects: [], expected };
    expect(checkHistory({ ...input, overlapOf: new Map([['O', 'bufferOne']]) })).toMatchObject({ skippedByPolicy: 1, missed: [] });
    expect(checkHistory({ ...input, overlapOf: new Map([['O', 'replace']]) }).missed).toEqual(['O:2026-11-29T12:00:10Z']);
    expect(checkHistory(input).missed).toEqual(['O:2026-11-29T12:00:10Z']);
  });
});
