/**
 * The audit behind `cronfence verify`, on hand-built histories: a clean one
 * passes, and each kind of violation is found with its execution key.
 */
import { describe, expect, it } from 'vitest';
import { auditHistory, type AuditInput } from '../../lib/core/audit.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { JobTombstone, StoredJob } from '../../lib/core/job-record.ts';
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import { DEFAULT_DST_POLICY } from '../../lib/core/schedule.ts';
import type { Slice, SliceStatus } from '../../lib/core/slice.ts';

const T0 = Date.parse('2026-05-01T12:00:00Z');
const SEC = 1000;
/** Ten minutes after T0: with the default 2 min grace, occurrences up to T0 + 8 min are expected. */
const NOW = T0 + 10 * 60 * SEC;

function job(overrides: Partial<StoredJob> = {}): StoredJob {
  return {
    id: 'every-minute',
    schedule: '0 * * * * *',
    timeZone: 'UTC',
    dst: DEFAULT_DST_POLICY,
    handler: 'h',
    enabled: true,
    policies: DEFAULT_POLICIES,
    shard: 0,
    nextFireAt: NOW + 60 * SEC,
    version: 3,
    generation: 1,
    createdAt: T0 - 3_600_000,
    updatedAt: T0 - 3_600_000,
    ...overrides,
  };
}

function slice(jobId: string, scheduledAt: number, status: SliceStatus, overrides: Partial<Slice> = {}): Slice {
  return {
    jobId,
    scheduledAt,
    status,
    fence: 1,
    owner: 'w1',
    attempts: 1,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 1,
    createdAt: scheduledAt - 60 * SEC,
    startedAt: scheduledAt + 50,
    finishedAt: scheduledAt + 200,
    ...overrides,
  };
}

function record(of: Slice, overrides: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    executionKey: executionKey(of.jobId, of.scheduledAt),
    jobId: of.jobId,
    scheduledAt: of.scheduledAt,
    fence: of.fence,
    owner: of.owner ?? 'w1',
    committedAt: of.finishedAt ?? of.scheduledAt,
    outcome: of.status === 'DEAD' ? 'DEAD' : 'SUCCEEDED',
    ...overrides,
  };
}

/** Every minute from T0 for `minutes` minutes, committed cleanly. */
function cleanRun(jobId: string, minutes: number): { slices: Slice[]; ledger: LedgerRecord[] } {
  const slices = Array.from({ length: minutes }, (_, i) => slice(jobId, T0 + i * 60 * SEC, 'SUCCEEDED'));
  return { slices, ledger: slices.map((s) => record(s)) };
}

function audit(input: Partial<AuditInput>): ReturnType<typeof auditHistory> {
  return auditHistory({ jobs: [job()], slices: [], ledger: [], now: NOW, since: T0, until: NOW, ...input });
}

const kinds = (report: ReturnType<typeof auditHistory>): string[] => report.violations.map((v) => `${v.kind} ${v.executionKey}`);

describe('auditHistory', () => {
  it('passes a clean history: every expected occurrence final, every commit on the ledger', () => {
    // Occurrences T0 .. T0+7 min are expected (T0+8 min is exactly now - grace, excluded); the slices of the last two minutes are extra.
    const { slices, ledger } = cleanRun('every-minute', 10);
    const report = audit({ slices, ledger });
    expect(report.violations).toEqual([]);
    expect(report.exitCode).toBe(0);
    expect(report.expected).toEqual({
      occurrences: 8,
      final: { SUCCEEDED: 8, DEAD: 0, SKIPPED: 0, MISSED: 0 },
      pending: 0,
      stuck: 0,
      missing: 0,
    });
    expect(report.slices).toEqual({ total: 10, byStatus: { SUCCEEDED: 10 } });
    expect(report.ledgerRecords).toBe(10);
    expect(report.jobs).toEqual({ checked: 1, enabled: 1, paused: 0, deleted: 0, unknown: 0 });
    expect(report.window.expectedUntil).toBe('2026-05-01T12:08:00.000Z');
    expect(report.perJob[0]).toMatchObject({
      jobId: 'every-minute',
      state: 'enabled',
      expected: 8,
      slices: 10,
      violations: 0,
      capped: false,
    });
  });

  it('finds a commit by a fence other than the last claim (a zombie commit landed): double_commit', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[3] = { ...(slices[3] as Slice), fence: 2, owner: 'w2' };
    const report = audit({ slices, ledger });
    expect(kinds(report)).toEqual(['double_commit every-minute:2026-05-01T12:03:00Z']);
    expect(report.violations[0]?.detail).toContain("fence 1 (w1) but the slice's last claim is fence 2 (w2)");
    expect(report.exitCode).toBe(1);
  });

  it('finds two SUCCEEDED ledger records for one key: double_commit', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    ledger.push({ ...(ledger[2] as LedgerRecord), fence: 2, owner: 'w2' });
    expect(kinds(audit({ slices, ledger }))).toEqual(['double_commit every-minute:2026-05-01T12:02:00Z']);
  });

  it('finds a SUCCEEDED slice with no ledger record, and a DEAD slice with none', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[5] = { ...(slices[5] as Slice), status: 'DEAD' };
    const report = audit({ slices, ledger: ledger.filter((_, i) => i !== 1 && i !== 5) });
    expect(kinds(report)).toEqual([
      'outcome_mismatch every-minute:2026-05-01T12:01:00Z',
      'outcome_mismatch every-minute:2026-05-01T12:05:00Z',
    ]);
    expect(report.violations[0]?.detail).toBe('slice is SUCCEEDED (fence 1) with no ledger record');
    expect(report.violations[1]?.detail).toBe('slice is DEAD (fence 1) with no ledger record');
  });

  it('finds a committed slice recorded DEAD and a DEAD ledger record under a SUCCEEDED slice', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[2] = { ...(slices[2] as Slice), status: 'DEAD' };
    ledger[4] = { ...(ledger[4] as LedgerRecord), outcome: 'DEAD' };
    const report = audit({ slices, ledger });
    expect(kinds(report)).toEqual([
      'outcome_mismatch every-minute:2026-05-01T12:02:00Z',
      'outcome_mismatch every-minute:2026-05-01T12:04:00Z',
    ]);
    expect(report.violations[0]?.detail).toMatch(/^slice is DEAD but the ledger has SUCCEEDED record \(fence 1, w1/);
    expect(report.violations[1]?.detail).toMatch(/^slice is SUCCEEDED but the ledger has DEAD record/);
  });

  it('finds a ledger record whose slice is not final, and one whose slice is not in the store', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    // RUNNING with a live lease: not stuck, but a ledger record says it was committed.
    slices[6] = { ...(slices[6] as Slice), status: 'RUNNING', leaseExpiresAt: NOW + 2000 };
    const report = audit({ slices: slices.filter((_, i) => i !== 7), ledger });
    expect(kinds(report)).toEqual([
      'outcome_mismatch every-minute:2026-05-01T12:06:00Z',
      'ledger_without_slice every-minute:2026-05-01T12:07:00Z',
      'missing every-minute:2026-05-01T12:07:00Z',
    ]);
    expect(report.violations[0]?.detail).toMatch(/^slice is RUNNING but the ledger has SUCCEEDED record/);
  });

  it('finds an expected occurrence with no slice: missing', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    const report = audit({ slices: slices.filter((_, i) => i !== 4), ledger: ledger.filter((_, i) => i !== 4) });
    expect(kinds(report)).toEqual(['missing every-minute:2026-05-01T12:04:00Z']);
    expect(report.violations[0]?.detail).toBe('no slice for this occurrence of "0 * * * * *" (UTC)');
    expect(report.expected.missing).toBe(1);
  });

  it("counts an older generation's SKIPPED slice at an expected instant as missing: the current definition never ran it", () => {
    const current = job({ generation: 3, updatedAt: T0 - 1 });
    const { slices, ledger } = cleanRun('every-minute', 8);
    const withGeneration = slices.map((s) => ({ ...s, generation: 3 }));
    withGeneration[2] = slice('every-minute', T0 + 2 * 60 * SEC, 'SKIPPED', {
      generation: 2,
      skipReason: 'superseded',
      startedAt: undefined,
    });
    const report = audit({ jobs: [current], slices: withGeneration, ledger: ledger.filter((_, i) => i !== 2) });
    expect(kinds(report)).toEqual(['missing every-minute:2026-05-01T12:02:00Z']);
    expect(report.violations[0]?.detail).toBe("only generation 2's slice, SKIPPED (superseded); generation 3 never ran it");
  });

  it('accepts the current generation SKIPPED with a reason and MISSED as final states, and lists MISSED', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[0] = { ...(slices[0] as Slice), status: 'MISSED', startedAt: undefined };
    slices[1] = { ...(slices[1] as Slice), status: 'SKIPPED', skipReason: 'overlap', startedAt: undefined };
    const report = audit({ slices, ledger: ledger.slice(2) });
    expect(report.violations).toEqual([]);
    expect(report.expected.final).toEqual({ SUCCEEDED: 6, DEAD: 0, SKIPPED: 1, MISSED: 1 });
    expect(report.missed).toEqual(['every-minute:2026-05-01T12:00:00Z']);
  });

  it('counts occurrences a MISSED range item covers (the scanner writes one per outage) as MISSED, not missing', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    const range = slice('every-minute', T0 - 60 * SEC, 'MISSED', {
      missedUntil: T0 + 5 * 60 * SEC,
      missedCount: 6,
      fence: 0,
      owner: undefined,
      startedAt: undefined,
    });
    const report = audit({ slices: [range, ...slices.slice(5)], ledger: ledger.slice(5) });
    expect(report.violations).toEqual([]);
    expect(report.expected.final).toEqual({ SUCCEEDED: 3, DEAD: 0, SKIPPED: 0, MISSED: 5 });
    // An older generation's range does not cover the current one's occurrences.
    const older = audit({
      jobs: [job({ generation: 2 })],
      slices: [{ ...range, generation: 1 }, ...slices.slice(5).map((s) => ({ ...s, generation: 2 }))],
      ledger: ledger.slice(5),
    });
    expect(kinds(older)).toHaveLength(5);
  });

  it('finds SKIPPED without a reason', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[3] = { ...(slices[3] as Slice), status: 'SKIPPED', skipReason: undefined };
    const report = audit({ slices, ledger: ledger.filter((_, i) => i !== 3) });
    expect(kinds(report)).toEqual(['skipped_without_reason every-minute:2026-05-01T12:03:00Z']);
  });

  it('finds live slices nothing moves (stuck) and leaves alone those still legitimately live (pending)', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    const at = (i: number): Slice => slices[i] as Slice;
    slices[0] = { ...at(0), status: 'ENQUEUED', fence: 0, owner: undefined, attempts: 0, startedAt: undefined };
    slices[1] = { ...at(1), status: 'RUNNING', leaseExpiresAt: at(1).scheduledAt + 4000 };
    slices[2] = { ...at(2), status: 'FAILED', nextAttemptAt: at(2).scheduledAt + 2000 };
    // A retry backing off past now, and a holder renewing its lease: not stuck.
    slices[3] = { ...at(3), status: 'FAILED', nextAttemptAt: NOW + 60_000 };
    slices[4] = { ...at(4), status: 'RUNNING', leaseExpiresAt: NOW + 3000 };
    const report = audit({ slices, ledger: ledger.slice(5) });
    expect(kinds(report)).toEqual([
      'stuck every-minute:2026-05-01T12:00:00Z',
      'stuck every-minute:2026-05-01T12:01:00Z',
      'stuck every-minute:2026-05-01T12:02:00Z',
    ]);
    expect(report.violations.map((v) => v.detail)).toEqual([
      'ENQUEUED and never claimed; due 600 s ago (generation 1)',
      'RUNNING (fence 1, w1); its lease ended 536 s ago (generation 1)',
      'FAILED after attempt 1; its retry was due 478 s ago (generation 1)',
    ]);
    expect(report.expected).toMatchObject({ occurrences: 8, pending: 2, stuck: 3, missing: 0 });
  });

  it('checks slices of paused and deleted jobs and older generations for finality only', () => {
    const paused = job({ id: 'paused', enabled: false, generation: 2 });
    const deleted: JobTombstone = { id: 'gone', deleted: true, generation: 4, version: 9, updatedAt: T0 + 60 * SEC };
    const slices = [
      slice('paused', T0, 'SUCCEEDED'),
      slice('paused', T0 + 60 * SEC, 'SKIPPED', { skipReason: 'paused' }),
      slice('paused', T0 + 120 * SEC, 'ENQUEUED', { attempts: 0 }),
      slice('gone', T0, 'SKIPPED', { skipReason: 'deleted', generation: 3 }),
      slice('gone', NOW - 30 * SEC, 'FAILED', { nextAttemptAt: NOW + 1000, generation: 3 }),
    ];
    const report = audit({ jobs: [paused, deleted], slices, ledger: [record(slices[0] as Slice)] });
    expect(kinds(report)).toEqual(['stuck paused:2026-05-01T12:02:00Z']);
    expect(report.expected.occurrences).toBe(0);
    expect(report.jobs).toEqual({ checked: 2, enabled: 0, paused: 1, deleted: 1, unknown: 0 });
  });

  it('expects occurrences only from the later of --since and the last change, up to the earlier of --until and now - grace', () => {
    const changed = job({ updatedAt: T0 + 150 * SEC, generation: 2 });
    const report = audit({ jobs: [changed], until: T0 + 6 * 60 * SEC, graceMs: 30_000 });
    // 12:03, 12:04, 12:05: after the change at 12:02:30, before --until 12:06.
    expect(kinds(report)).toEqual([
      'missing every-minute:2026-05-01T12:03:00Z',
      'missing every-minute:2026-05-01T12:04:00Z',
      'missing every-minute:2026-05-01T12:05:00Z',
    ]);
    expect(report.perJob[0]).toMatchObject({
      expectedFrom: '2026-05-01T12:02:30.000Z',
      expectedUntil: '2026-05-01T12:06:00.000Z',
      expected: 3,
    });
  });

  it('caps the enumeration per job and says so', () => {
    const perSecond = job({ id: 'per-second', schedule: '* * * * * *' });
    const report = audit({ jobs: [perSecond], occurrenceCap: 50 });
    expect(report.capped).toEqual(['per-second']);
    expect(report.expected.occurrences).toBe(50);
    expect(report.perJob[0]).toMatchObject({ capped: true, expected: 50 });
  });

  it('lists late starts and gives the lag distribution of slices claimed once', () => {
    const { slices, ledger } = cleanRun('every-minute', 8);
    slices[1] = { ...(slices[1] as Slice), startedAt: (slices[1] as Slice).scheduledAt + 2500 };
    // Retried: its startedAt is the last claim's, listed but kept out of the distribution.
    slices[2] = { ...(slices[2] as Slice), startedAt: (slices[2] as Slice).scheduledAt + 9000, attempts: 2, fence: 2 };
    // Claimed ahead of its second: the worker waits, so its lag is 0.
    slices[3] = { ...(slices[3] as Slice), startedAt: (slices[3] as Slice).scheduledAt - 400 };
    ledger[2] = { ...(ledger[2] as LedgerRecord), fence: 2 };
    const report = audit({ slices, ledger });
    expect(report.violations).toEqual([]);
    expect(report.lateSlots).toEqual([
      { executionKey: 'every-minute:2026-05-01T12:02:00Z', status: 'SUCCEEDED', lagMs: 9000, attempts: 2 },
      { executionKey: 'every-minute:2026-05-01T12:01:00Z', status: 'SUCCEEDED', lagMs: 2500, attempts: 1 },
    ]);
    expect(report.startLag).toEqual({ count: 7, p50Ms: 50, p99Ms: 2500, maxMs: 2500 });
  });

  it('reports no lag figures when nothing started, as null', () => {
    const report = audit({ jobs: [job({ enabled: false })] });
    expect(report.startLag).toEqual({ count: 0, p50Ms: null, p99Ms: null, maxMs: null });
    // Nothing was expected of a paused job: not a pass.
    expect(report.outcome).toBe('nothing-checked');
    expect(report.exitCode).toBe(3);
  });

  it('counts jobs known only from slices or ledger records as unknown and still checks them', () => {
    const orphan = slice('orphan', T0, 'SUCCEEDED');
    const report = audit({ jobs: [], slices: [orphan], ledger: [] });
    expect(report.jobs).toMatchObject({ checked: 1, unknown: 1 });
    expect(kinds(report)).toEqual(['outcome_mismatch orphan:2026-05-01T12:00:00Z']);
  });

  describe('with business writes on record (--effects)', () => {
    const effect = (at: number, fence: number) => ({ executionKey: executionKey('every-minute', at), fence, source: 'payouts' });
    const minute = (i: number): number => T0 + i * 60 * SEC;

    it('passes writes of the committed fence', () => {
      const { slices, ledger } = cleanRun('every-minute', 8);
      const report = audit({ slices, ledger, effects: slices.map((s) => effect(s.scheduledAt, 1)) });
      expect(report.violations).toEqual([]);
      expect(report.effects).toBe(8);
    });

    it('finds the double commit the ledger no longer shows: a zombie committed first, then the last holder overwrote the record', () => {
      const { slices, ledger } = cleanRun('every-minute', 8);
      slices[1] = { ...(slices[1] as Slice), fence: 2, owner: 'w2' };
      ledger[1] = { ...(ledger[1] as LedgerRecord), fence: 2, owner: 'w2' };
      const report = audit({ slices, ledger, effects: [effect(minute(1), 1), effect(minute(1), 2)] });
      expect(kinds(report)).toEqual(['double_commit every-minute:2026-05-01T12:01:00Z']);
      expect(report.violations[0]?.detail).toBe('business writes from fences 1 and 2 in payouts');
    });

    it("finds writes of a fence other than the commit on record, and merges it with the ledger's own finding", () => {
      const { slices, ledger } = cleanRun('every-minute', 8);
      slices[2] = { ...(slices[2] as Slice), fence: 2, owner: 'w2' };
      const report = audit({ slices, ledger, effects: [effect(minute(2), 1), effect(minute(2), 2), effect(minute(3), 2)] });
      expect(kinds(report)).toEqual(['double_commit every-minute:2026-05-01T12:02:00Z', 'double_commit every-minute:2026-05-01T12:03:00Z']);
      expect(report.violations.map((v) => v.detail)).toEqual([
        "ledger SUCCEEDED by fence 1 (w1) but the slice's last claim is fence 2 (w2); business writes from fences 1 and 2 in payouts",
        'business writes of fence 2 in payouts but the commit on record is fence 1',
      ]);
    });

    it('finds writes with no commit on record, and writes with neither slice nor record', () => {
      const { slices, ledger } = cleanRun('every-minute', 8);
      slices[4] = { ...(slices[4] as Slice), status: 'DEAD' };
      ledger[4] = { ...(ledger[4] as LedgerRecord), outcome: 'DEAD' };
      const report = audit({ slices, ledger, effects: [effect(minute(4), 1), effect(minute(9) + 5 * SEC, 3)] });
      expect(kinds(report)).toEqual([
        'outcome_mismatch every-minute:2026-05-01T12:04:00Z',
        'outcome_mismatch every-minute:2026-05-01T12:09:05Z',
      ]);
      expect(report.violations.map((v) => v.detail)).toEqual([
        'business writes of fence 1 in payouts but no SUCCEEDED ledger record',
        'business writes of fence 3 in payouts but no slice and no ledger record',
      ]);
    });
  });

  it('reports a stored job whose schedule does not parse as set_aside, and checks the other jobs', () => {
    const { slices, ledger } = cleanRun('every-minute', 10);
    const report = audit({ jobs: [job({ id: 'broken', schedule: 'not a cron' }), job()], slices, ledger });
    expect(kinds(report)).toEqual(['set_aside job broken']);
    expect(report.violations[0]?.detail).toMatch(/^schedule "not a cron" in UTC does not parse .*: the engine cannot plan this job/);
    expect(report.expected.final.SUCCEEDED).toBe(8);
    expect(report.exitCode).toBe(1);
  });

  describe("a scan's set-aside records", () => {
    const REPAIRED_AT = T0 + 5 * 60 * SEC;
    const aside = (generation: number) => ({
      jobId: 'every-minute',
      generation,
      reason: 'schedule "every tuesday-ish" does not parse',
      from: T0 + 3 * 60 * SEC,
      at: T0 + 2 * 60 * SEC + 30 * SEC,
      by: 'scanner-1',
    });
    /** Generation 2 ran minutes 0-2, a bad row from 2:30 left 3-4 unsent, a put at 5:00 (generation 3) ran the rest. */
    function poisonedThenRepaired(): { slices: Slice[]; ledger: LedgerRecord[] } {
      const slices = [0, 1, 2, 5, 6, 7, 8, 9].map((minute) =>
        slice('every-minute', T0 + minute * 60 * SEC, 'SUCCEEDED', { generation: minute < 5 ? 2 : 3 }),
      );
      return { slices, ledger: slices.map((s) => record(s)) };
    }

    it("reports a job set aside in the generation it still has, with the scan's reason", () => {
      const { slices, ledger } = poisonedThenRepaired();
      const report = audit({
        jobs: [job({ generation: 2 })],
        slices: slices.filter((s) => s.generation === 2),
        ledger: ledger.filter((r) => r.scheduledAt < T0 + 3 * 60 * SEC),
        setAside: [aside(2)],
      });
      expect(kinds(report)).toContain('set_aside job every-minute');
      expect(report.violations.find((v) => v.kind === 'set_aside')?.detail).toMatch(
        /^set aside in generation 2 by scanner-1 at .*: schedule "every tuesday-ish" does not parse; its occurrences from 2026-05-01T12:03:00Z on were not sent$/,
      );
      expect(report.exitCode).toBe(1);
    });

    it("passes a job repaired since: the record of its older generation, and that generation's slots, are history", () => {
      const { slices, ledger } = poisonedThenRepaired();
      const repaired = job({ generation: 3, version: 5, updatedAt: REPAIRED_AT, nextFireAt: REPAIRED_AT });
      const report = audit({ jobs: [repaired], slices, ledger, setAside: [aside(2)] });
      expect(report.violations).toEqual([]);
      expect(report.expected.final.SUCCEEDED).toBe(3);
      expect(report.exitCode).toBe(0);
    });

    it('reports the record of a job whose row cannot be read at all', () => {
      const report = audit({ jobs: [], setAside: [{ ...aside(2), jobId: 'gone' }] });
      expect(kinds(report)).toEqual(['set_aside job gone']);
    });
  });

  describe('identity: what ran, and when', () => {
    it('reports a slot of the current generation that ran another handler or payload: wrong_definition', () => {
      const { slices, ledger } = cleanRun('every-minute', 10);
      slices[2] = { ...(slices[2] as Slice), handler: 'attacker' };
      slices[4] = { ...(slices[4] as Slice), payload: { amount: 1_000_000 } };
      const report = audit({
        jobs: [job({ payload: { amount: 5 } })],
        slices: slices.map((s, i) => (i === 4 ? s : { ...s, payload: { amount: 5 } })),
        ledger,
      });
      expect(kinds(report)).toEqual([
        'wrong_definition every-minute:2026-05-01T12:02:00Z',
        'wrong_definition every-minute:2026-05-01T12:04:00Z',
      ]);
      expect(report.violations[0]?.detail).toBe('ran handler "attacker"; the job\'s generation 1 runs "h"');
      expect(report.violations[1]?.detail).toBe('ran payload {"amount":1000000}; the job\'s generation 1 has {"amount":5}');
      expect(report.exitCode).toBe(1);
    });

    it('reports a SUCCEEDED slot at a second that is not an occurrence: not_an_occurrence', () => {
      const { slices, ledger } = cleanRun('every-minute', 10);
      const odd = slice('every-minute', T0 + 90 * SEC, 'SUCCEEDED');
      const report = audit({ slices: [...slices, odd], ledger: [...ledger, record(odd)] });
      expect(kinds(report)).toEqual(['not_an_occurrence every-minute:2026-05-01T12:01:30Z']);
      expect(report.violations[0]?.detail).toBe('SUCCEEDED at a second that is not an occurrence of "0 * * * * *" (UTC)');
      expect(report.exitCode).toBe(1);
    });

    it("accepts an operator's triggered slot (its own payload, a sub-second instant) and a backfilled occurrence; refuses a sub-second slot with no trigger on record", () => {
      const { slices } = cleanRun('every-minute', 10);
      const triggered = slice('every-minute', T0 + 90 * SEC + 417, 'SUCCEEDED', {
        payload: { manual: true },
        operator: { action: 'trigger', actor: 'ops', at: T0 + 90 * SEC, requestId: 'r1' },
      });
      const backfilled = { ...(slices[3] as Slice), operator: { action: 'backfill' as const, actor: 'ops', at: NOW } };
      const forged = slice('every-minute', T0 + 150 * SEC + 1, 'SUCCEEDED');
      const all = [...slices.filter((_, i) => i !== 3), backfilled, triggered, forged];
      const report = audit({ slices: all, ledger: all.map((s) => record(s)) });
      expect(kinds(report)).toEqual([`not_an_occurrence ${executionKey('every-minute', T0 + 150 * SEC + 1)}`]);
      expect(report.violations[0]?.detail).toBe("a sub-second slot with no operator's trigger on record");
    });

    it("compares an older generation's slots with each other (its definition is not stored): the odd one out is reported", () => {
      const { slices, ledger } = cleanRun('every-minute', 10);
      const older = slices.map((s, i) => ({ ...s, generation: 1, handler: i === 5 ? 'attacker' : 'old-handler' }));
      const report = audit({ jobs: [job({ generation: 2, updatedAt: T0 + 9 * 60 * SEC })], slices: older, ledger });
      expect(kinds(report)).toEqual(['wrong_definition every-minute:2026-05-01T12:05:00Z']);
      expect(report.violations[0]?.detail).toMatch(
        /^ran handler "attacker" with payload null, but most slots of generation 1 ran handler "old-handler" with payload null/,
      );
    });

    it('does not judge a generation ahead of the job as fine', () => {
      const { slices, ledger } = cleanRun('every-minute', 10);
      slices[1] = { ...(slices[1] as Slice), generation: 7 };
      expect(kinds(audit({ slices, ledger }))).toEqual(['wrong_definition every-minute:2026-05-01T12:01:00Z']);
    });
  });

  it("reports each stale job of the dead-man's switch as a violation, at its overdue occurrence", () => {
    const { slices, ledger } = cleanRun('every-minute', 10);
    const stale = [
      {
        kind: 'stale' as const,
        jobId: 'every-minute',
        silentSince: T0 + 9 * 60 * SEC,
        deadline: NOW - 1,
        intervalMs: 60_000,
        lastFinalAt: T0 + 9 * 60 * SEC,
        overdueAt: NOW,
      },
    ];
    const report = audit({ slices, ledger, stale });
    expect(kinds(report)).toEqual(['stale every-minute:2026-05-01T12:10:00Z']);
    expect(report.violations[0]?.detail).toMatch(/^no final slot since 2026-05-01T12:09:00.000Z \(last final slot: 2026-05-01T12:09:00Z\)/);
    expect(report.exitCode).toBe(1);
  });

  it('reports an unreadable row by name and checks the rest', () => {
    const { slices, ledger } = cleanRun('every-minute', 10);
    const unreadable = [
      { table: 'jobs' as const, key: 'garbled', jobId: 'garbled', reason: 'policies must be an object of numbers' },
      {
        table: 'slices' as const,
        key: executionKey('every-minute', NOW + 60 * SEC),
        jobId: 'every-minute',
        scheduledAt: NOW + 60 * SEC,
        reason: 'status is not a slice status',
      },
    ];
    const report = audit({ slices, ledger, unreadable });
    expect(kinds(report)).toEqual(['unreadable_row job garbled', `unreadable_row ${executionKey('every-minute', NOW + 60 * SEC)}`]);
    expect(report.violations[0]?.detail).toBe('jobs item garbled: policies must be an object of numbers; not checked');
    expect(report.expected.final.SUCCEEDED).toBe(8);
  });

  it('says it checked nothing when the installation is younger than the grace (exit 3), not pass', () => {
    const young = job({ createdAt: NOW - 60 * SEC, updatedAt: NOW - 60 * SEC });
    const first = slice('every-minute', NOW - 60 * SEC, 'SUCCEEDED');
    const report = audit({ jobs: [young], slices: [first], ledger: [record(first)], since: NOW - 86_400_000 });
    expect(report.expected.occurrences).toBe(0);
    expect(report.outcome).toBe('nothing-checked');
    expect(report.exitCode).toBe(3);
    expect(report.nothingChecked).toMatch(
      /^every active job became active after 2026-05-01T12:08:00.000Z \(now minus the grace of 120 s\): the installation, or its jobs' last change, is younger than the grace/,
    );
    expect(report.nothingChecked).toContain('1 slices read were checked for finality only');
    // A violation still wins: exit 1.
    expect(audit({ jobs: [young], slices: [{ ...first, handler: 'other' }], ledger: [record(first)] }).exitCode).toBe(1);
  });
});
