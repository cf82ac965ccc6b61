/**
 * The job lifecycle's rules for the wheel model (core/job-lifecycle.ts): the
 * inbox entry a change puts for the scanners, the due occurrences a change
 * must record for the generation it ends, why a claimed slice of an older
 * generation does not run, and a job's next occurrence now that no scan
 * writes the job.
 */
import { describe, expect, it } from 'vitest';
import {
  dueWithoutSlice,
  inboxEntryOf,
  NEVER,
  nextOccurrenceOf,
  planDelete,
  planPause,
  planPut,
  planResume,
  supersededReason,
  withoutRecord,
} from '../../lib/core/job-lifecycle.ts';
import type { JobTombstone, StoredJob } from '../../lib/core/job-record.ts';
import { DEFAULT_POLICIES, parseJobSpec } from '../../lib/core/job-spec.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';

const T = Date.parse('2026-12-04T12:00:00Z');
const SEC = 1000;

/** A job as `put` stored it at `T` (first occurrence at or after it). */
function putAt(input: Record<string, unknown>, now = T): StoredJob {
  const change = planPut(parseJobSpec({ id: 'job', handler: 'h', schedule: '*/10 * * * * *', ...input }), undefined, now, 1);
  if (change === undefined) throw new Error('a first put always writes');
  return change.next;
}

const tombstone: JobTombstone = { id: 'job', deleted: true, generation: 4, version: 9, updatedAt: T, changeReason: 'deleted' };
const note = { actor: 'alice', reason: 'incident', at: T };

describe('inboxEntryOf', () => {
  it('a job in the schedule: its generation, from its first occurrence', () => {
    const job = putAt({}, T + 3 * SEC);
    expect(inboxEntryOf(job)).toEqual({ jobId: 'job', generation: 1, from: T + 10 * SEC });
  });

  it('nothing for a tombstone, a paused or disabled job, or one that never fires again', () => {
    const job = putAt({});
    expect(inboxEntryOf(tombstone)).toBeUndefined();
    expect(inboxEntryOf(planPause(job, T, note)!.next)).toBeUndefined();
    expect(inboxEntryOf(putAt({ enabled: false }))).toBeUndefined();
    expect(inboxEntryOf({ ...job, nextFireAt: NEVER })).toBeUndefined();
  });

  it('a timed pause stays in the schedule: its entry starts at the first occurrence at or after its end', () => {
    const paused = planPause(putAt({}), T, { ...note, until: T + 95 * SEC })!.next;
    expect(inboxEntryOf(paused)).toEqual({ jobId: 'job', generation: 2, from: T + 100 * SEC });
  });
});

describe('dueWithoutSlice', () => {
  it("the ended generation's occurrences from its start (or the catch-up window) until the change", () => {
    const job = putAt({});
    expect(dueWithoutSlice(job, T + 25 * SEC)).toEqual({ from: T, to: T + 25 * SEC, occurrences: [T, T + 10 * SEC, T + 20 * SEC] });
    const windowed = putAt({ policies: { catchUpWindowMs: 30_000 } });
    // Older than the window: a scan would have recorded those MISSED, not run them.
    expect(dueWithoutSlice(windowed, T + 600 * SEC)).toEqual({
      from: T + 570 * SEC,
      to: T + 600 * SEC,
      occurrences: [T + 570 * SEC, T + 580 * SEC, T + 590 * SEC],
    });
  });

  it('nothing when the record was not running: none, a tombstone, paused, or changed at this very instant', () => {
    const job = putAt({});
    expect(dueWithoutSlice(undefined, T + 25 * SEC)).toBeUndefined();
    expect(dueWithoutSlice(tombstone, T + 25 * SEC)).toBeUndefined();
    expect(dueWithoutSlice(planPause(job, T, note)!.next, T + 25 * SEC)).toBeUndefined();
    expect(dueWithoutSlice(job, T)).toBeUndefined();
  });

  it('a timed pause whose end passed ran from its end on', () => {
    const paused = planPause(putAt({}), T, { ...note, until: T + 20 * SEC })!.next;
    expect(dueWithoutSlice(paused, T + 45 * SEC)?.occurrences).toEqual([T + 20 * SEC, T + 30 * SEC, T + 40 * SEC]);
  });
});

describe('withoutRecord', () => {
  const slice = (at: number, fields: Partial<Slice> = {}): Slice => ({
    jobId: 'job',
    scheduledAt: at,
    status: SliceStatus.Succeeded,
    fence: 1,
    attempts: 1,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 3,
    createdAt: at,
    ...fields,
  });

  it('leaves out the instants with a slice and those a range record covers (its end exclusive)', () => {
    const due = [0, 10, 20, 30, 40, 50].map((s) => T + s * SEC);
    const slices = [slice(T + 10 * SEC), slice(T + 20 * SEC, { status: SliceStatus.Missed, missedUntil: T + 40 * SEC })];
    expect(withoutRecord(due, 3, slices)).toEqual([T, T + 40 * SEC, T + 50 * SEC]);
    expect(withoutRecord(due, 3, [])).toEqual(due);
  });

  it("an older generation's SKIPPED slice, or its range, is no record of this generation's occurrence; an older run is", () => {
    const due = [0, 10, 20].map((s) => T + s * SEC);
    const slices = [
      slice(T, { status: SliceStatus.Skipped, skipReason: 'superseded', generation: 2 }),
      slice(T + 10 * SEC, { generation: 2 }),
      slice(T + 15 * SEC, { status: SliceStatus.Missed, missedUntil: T + 30 * SEC, generation: 2 }),
    ];
    expect(withoutRecord(due, 3, slices)).toEqual([T, T + 20 * SEC]);
  });
});

describe('supersededReason', () => {
  const job = putAt({});

  it('none for the current generation: the slice runs', () => {
    expect(supersededReason(job, { generation: 1 })).toBeUndefined();
  });

  it('deleted for a job that is gone (a tombstone, whatever generation, or no record)', () => {
    expect(supersededReason(tombstone, { generation: 3 })).toBe('deleted');
    expect(supersededReason(planDelete(job, T).next, { generation: 1 })).toBe('deleted');
    expect(supersededReason(undefined, { generation: 1 })).toBe('deleted');
  });

  it("the reason the change that made the job's generation stored", () => {
    const paused = planPause(job, T, note)!.next;
    expect(paused.changeReason).toBe('paused');
    expect(supersededReason(paused, { generation: 1 })).toBe('paused');
    const resumed = planResume(paused, T + SEC)!.next;
    expect(supersededReason(resumed, { generation: 1 })).toBe('superseded');
    expect(supersededReason(resumed, { generation: 2 })).toBe('superseded');
    const disabled = planPut(parseJobSpec({ id: 'job', handler: 'h', schedule: '*/10 * * * * *', enabled: false }), job, T, 1)!.next;
    expect(supersededReason(disabled, { generation: 1 })).toBe('disabled');
  });

  it('a record stored before changeReason existed: superseded while enabled, paused otherwise', () => {
    const { changeReason: _reason, ...old } = { ...job, generation: 2 };
    expect(supersededReason(old, { generation: 1 })).toBe('superseded');
    expect(supersededReason({ ...old, enabled: false }, { generation: 1 })).toBe('paused');
  });
});

describe('nextOccurrenceOf', () => {
  it("the next occurrence at or after now, never before its generation's first", () => {
    const job = putAt({}, T + 3 * SEC);
    expect(nextOccurrenceOf(job, T)).toBe(T + 10 * SEC);
    expect(nextOccurrenceOf(job, T + 10 * SEC)).toBe(T + 10 * SEC);
    expect(nextOccurrenceOf(job, T + 11 * SEC)).toBe(T + 20 * SEC);
  });

  it('a one-time job: its slot until it passes, then NEVER; a job stored as never firing stays NEVER', () => {
    const once = putAt({ schedule: 'at(2026-12-04T12:00:30)' });
    expect(once.nextFireAt).toBe(T + 30 * SEC);
    expect(nextOccurrenceOf(once, T)).toBe(T + 30 * SEC);
    expect(nextOccurrenceOf(once, T + 30 * SEC)).toBe(T + 30 * SEC);
    expect(nextOccurrenceOf(once, T + 31 * SEC)).toBe(NEVER);
    expect(nextOccurrenceOf({ ...putAt({}), nextFireAt: NEVER }, T)).toBe(NEVER);
  });
});
