/**
 * The pure rules behind operator actions (lib/core/operator.ts,
 * backfill-plan.ts, job-lifecycle.ts pause/resume/ownership), with a manual
 * clock: where a triggered slot sits, which instants a backfill asks for, when
 * a timed pause is over, and which owner may replace a job. Each bad input's
 * message names the field and the value.
 */
import { describe, expect, it } from 'vitest';
import { MAX_BACKFILL_OCCURRENCES, parseRate, parseSlotPayload, planBackfill } from '../../lib/core/backfill-plan.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { InvalidOperatorRequestError, JobOwnershipError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { activeSince, inDueIndex, isActiveAt, planPause, planPut, planResume } from '../../lib/core/job-lifecycle.ts';
import { MAX_PAYLOAD_BYTES, parseJobSpec } from '../../lib/core/job-spec.ts';
import {
  isTriggeredInstant,
  parseOperatorInstant,
  requestMarkerInstant,
  triggerInstant,
  validatePauseUntil,
  validateReason,
} from '../../lib/core/operator.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';

const T0 = Date.parse('2026-12-01T13:00:00Z');

function job(overrides: Partial<StoredJob> = {}): StoredJob {
  const spec = parseJobSpec({ id: 'nightly', schedule: '*/5 * * * * *', handler: 'h' });
  return { ...spec, shard: 0, nextFireAt: T0, version: 3, generation: 2, createdAt: T0 - 60_000, updatedAt: T0 - 60_000, ...overrides };
}

function refusal(fn: () => unknown): InvalidOperatorRequestError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidOperatorRequestError) return error;
    throw error;
  }
  throw new Error('expected an InvalidOperatorRequestError');
}

describe('triggered slots', () => {
  it('sit at a sub-second instant of the trigger second, so they never take an occurrence key', () => {
    const at = triggerInstant('req-1', T0 + 250);
    expect(Math.floor(at / 1000) * 1000).toBe(T0);
    expect(at % 1000).toBeGreaterThanOrEqual(1);
    expect(isTriggeredInstant(at)).toBe(true);
    expect(isTriggeredInstant(T0)).toBe(false);
    expect(executionKey('nightly', at)).toMatch(/^nightly:2026-12-01T13:00:00\.\d{3}Z$/);
    expect(executionKey('nightly', T0)).toBe('nightly:2026-12-01T13:00:00Z');
  });

  it('derive the offset from the request id; a taken offset steps to the next', () => {
    expect(triggerInstant('req-1', T0)).toBe(triggerInstant('req-1', T0 + 999));
    const offsets = new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => triggerInstant(id, T0)));
    expect(offsets.size).toBeGreaterThan(1);
    expect(triggerInstant('req-1', T0, 1)).not.toBe(triggerInstant('req-1', T0, 0));
    for (let attempt = 0; attempt < 1200; attempt++) expect(isTriggeredInstant(triggerInstant('req-1', T0, attempt))).toBe(true);
  });

  it('mark the request at a negative sort key derived from the id alone (no history read starts below 0)', () => {
    expect(requestMarkerInstant('req-1')).toBe(requestMarkerInstant('req-1'));
    expect(requestMarkerInstant('req-1')).toBeLessThan(0);
    expect(requestMarkerInstant('req-2')).not.toBe(requestMarkerInstant('req-1'));
  });
});

describe('operator input', () => {
  it('times: ISO with a zone or epoch ms; a zoneless or unreadable time names the field and value', () => {
    expect(parseOperatorInstant('--from', '2026-12-01T13:00:00Z')).toBe(T0);
    expect(parseOperatorInstant('--from', '2026-12-01T14:00:00+01:00')).toBe(T0);
    expect(parseOperatorInstant('--from', String(T0))).toBe(T0);
    expect(refusal(() => parseOperatorInstant('--from', '2026-12-01T13:00:00')).message).toBe(
      'invalid --from "2026-12-01T13:00:00": must be an ISO 8601 time with a zone, like 2026-12-24T18:00:00Z, or epoch ms',
    );
    expect(refusal(() => parseOperatorInstant('--to', 'tomorrow')).field).toBe('--to');
  });

  it('a pause needs a reason, and its end must be ahead', () => {
    expect(refusal(() => validateReason(undefined, true)).message).toBe(
      'invalid reason (missing): is required: say why (it is recorded with the actor)',
    );
    expect(refusal(() => validateReason('  ', true)).field).toBe('reason');
    expect(validateReason(undefined, false)).toBeUndefined();
    expect(refusal(() => validatePauseUntil(T0 - 1, T0)).message).toContain(
      'invalid until "2026-12-01T12:59:59.999Z": must be in the future',
    );
    expect(validatePauseUntil(T0 + 1, T0)).toBe(T0 + 1);
  });

  it('a slot payload is a JSON object within the job payload limit', () => {
    expect(parseSlotPayload('{"amount": 5}')).toEqual({ amount: 5 });
    expect(refusal(() => parseSlotPayload('{bad')).message).toMatch(/^invalid payload "\{bad": is not JSON/);
    expect(refusal(() => parseSlotPayload('[1]')).message).toBe('invalid payload "[1]": must be a JSON object');
    expect(refusal(() => parseSlotPayload({ big: 'x'.repeat(MAX_PAYLOAD_BYTES) })).message).toContain(
      `must be at most ${MAX_PAYLOAD_BYTES} bytes`,
    );
  });

  it('rates: N/s, N/m or N, above 0 and at most 100/s', () => {
    expect(parseRate('5/s')).toBe(5);
    expect(parseRate('30/m')).toBe(0.5);
    expect(parseRate('2')).toBe(2);
    expect(refusal(() => parseRate('fast')).message).toBe(
      'invalid rate "fast": must be a rate like 5/s or 30/m, above 0 and at most 100/s',
    );
    expect(refusal(() => parseRate('0/s')).field).toBe('rate');
    expect(refusal(() => parseRate('500/s')).field).toBe('rate');
  });
});

describe('backfill plan', () => {
  it("is the schedule's occurrences in [from, to), oldest first", () => {
    expect(planBackfill(job(), T0, T0 + 20_000, T0 + 60_000)).toEqual([T0, T0 + 5000, T0 + 10_000, T0 + 15_000]);
  });

  it('refuses an empty or reversed range, a future end and a range too long, naming the field', () => {
    expect(refusal(() => planBackfill(job(), T0, T0, T0 + 1)).field).toBe('to');
    expect(refusal(() => planBackfill(job(), T0, T0 + 10_000, T0 + 5000)).message).toContain('must not be in the future');
    const tooLong = refusal(() => planBackfill(job(), T0 - 86_400_000, T0, T0));
    expect(tooLong.field).toBe('from');
    expect(tooLong.message).toContain(`more than ${MAX_BACKFILL_OCCURRENCES} occurrences`);
  });
});

describe('pause with an end, and resume', () => {
  const clock = new ManualClock(T0);
  const until = T0 + 30 * 60_000;
  const note = { actor: 'alice', reason: 'incident 42', at: T0 };

  it('a timed pause stays in the schedule from its first occurrence at or after its end, a new generation', () => {
    const change = planPause(job(), clock.now(), { ...note, until })!;
    expect(change.settle).toBe('paused');
    expect(change.next).toMatchObject({
      enabled: false,
      nextFireAt: until,
      generation: 3,
      version: 4,
      pause: { actor: 'alice', reason: 'incident 42', until },
    });
    expect(inDueIndex(change.next)).toBe(true);
    expect(inDueIndex(planPause(job(), clock.now(), note)!.next)).toBe(false);
  });

  it('is over by itself at its end: active from then on, expected from then on', () => {
    const paused = planPause(job(), clock.now(), { ...note, until })!.next;
    expect(isActiveAt(paused, until - 1)).toBe(false);
    expect(isActiveAt(paused, until)).toBe(true);
    expect(activeSince(paused)).toBe(until);
  });

  it('pausing again exactly so changes nothing; with another end it is a new pause', () => {
    const paused = planPause(job(), clock.now(), { ...note, until })!.next;
    expect(planPause(paused, clock.now(), { ...note, at: T0 + 5, until })).toBeUndefined();
    expect(planPause(paused, clock.now(), { ...note, until: until + 60_000 })!.next).toMatchObject({
      generation: 4,
      nextFireAt: until + 60_000,
    });
  });

  it('resume before the end: a new generation from the next occurrence; after it: the record cleared, same generation, same nextFireAt', () => {
    const paused = planPause(job(), clock.now(), { ...note, until })!.next;
    const early = planResume(paused, T0 + 7000, { actor: 'bob', at: T0 + 7000 })!.next;
    expect(early).toMatchObject({ enabled: true, generation: 4, nextFireAt: T0 + 10_000, resumed: { actor: 'bob' } });
    expect(early.pause).toBeUndefined();
    const lapsed = { ...paused, nextFireAt: until + 600_000 };
    const late = planResume(lapsed, until + 1000, { actor: 'bob', at: until + 1000 })!.next;
    expect(late).toMatchObject({ enabled: true, generation: 3, nextFireAt: until + 600_000 });
    expect(late.pause).toBeUndefined();
  });
});

describe('origin', () => {
  it('runtime is the default; a put from one owner never replaces the other owner’s job', () => {
    expect(parseJobSpec({ id: 'a', schedule: '* * * * *', handler: 'h' }).origin).toBe('runtime');
    const cdkJob = job({ origin: 'cdk' });
    const fromRuntime = parseJobSpec({ id: 'nightly', schedule: '* * * * *', handler: 'h', origin: 'runtime' });
    expect(() => planPut(fromRuntime, cdkJob, T0, 1)).toThrow(JobOwnershipError);
    expect(() => planPut(fromRuntime, cdkJob, T0, 1)).toThrow(
      'job "nightly" is declared in the CDK stack (origin "cdk"); change it there, not at run time',
    );
    expect(() => planPut({ ...fromRuntime, origin: 'cdk' }, job({ origin: 'runtime' }), T0, 1)).toThrow('was created at run time');
    // A job stored before origins existed is taken over by whoever writes it next.
    expect(planPut({ ...fromRuntime, origin: 'cdk' }, job({ origin: undefined }), T0, 1)?.next.origin).toBe('cdk');
  });

  it('a group is validated like an id', () => {
    expect(() => parseJobSpec({ id: 'a', schedule: '* * * * *', handler: 'h', group: 'pay ments' })).toThrow('invalid group "pay ments"');
  });
});
