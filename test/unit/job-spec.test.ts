import { describe, expect, it } from 'vitest';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { DEFAULT_POLICIES, MAX_ATTEMPTS, MAX_PAYLOAD_BYTES, parseJobSpec } from '../../lib/core/job-spec.ts';
import { WORK_QUEUE } from '../../lib/aws/schema.ts';

const valid = { id: 'settle', schedule: '0 2 1 * *', handler: 'merchant-settlement' };

function refusal(input: unknown, knownHandlers?: string[]): InvalidJobSpecError {
  try {
    parseJobSpec(input, { knownHandlers });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidJobSpecError);
    return error as InvalidJobSpecError;
  }
  throw new Error('expected a refusal');
}

describe('parseJobSpec', () => {
  it('fills defaults', () => {
    const spec = parseJobSpec(valid);
    expect(spec.timeZone).toBe('UTC');
    expect(spec.enabled).toBe(true);
    expect(spec.policies).toEqual(DEFAULT_POLICIES);
  });

  it.each([
    [{ ...valid, schedule: '61 * * * *' }, 'schedule', '61 * * * *'],
    [{ ...valid, timeZone: 'Europe/Atlantis' }, 'timeZone', 'Europe/Atlantis'],
    [{ ...valid, id: 'a:b' }, 'id', 'a:b'],
    [{ ...valid, policies: { leaseMs: 10 } }, 'policies.leaseMs', 10],
    [{ ...valid, policies: { leaseMs: 4000, heartbeatMs: 3000 } }, 'policies.heartbeatMs', 3000],
    [{ ...valid, policies: { maxAttempts: 0 } }, 'policies.maxAttempts', 0],
    [{ ...valid, policies: { maxAttempts: 2.5 } }, 'policies.maxAttempts', 2.5],
    [{ ...valid, policies: { maxAttempts: 50 } }, 'policies.maxAttempts', 50],
    [{ ...valid, policies: { timeoutMs: 3_600_000 } }, 'policies.timeoutMs', 3_600_000],
    [{ ...valid, policies: { bogus: 1 } }, 'policies', { bogus: 1 }],
    [{ ...valid, handler: undefined }, 'handler', undefined],
  ])('refuses %j naming %s', (input, field, value) => {
    const error = refusal(input);
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toContain(`invalid ${field}`);
  });

  it("caps maxAttempts well under the work queue's maxReceiveCount, so SQS never redrives a live slice's message", () => {
    expect(refusal({ ...valid, policies: { maxAttempts: MAX_ATTEMPTS + 1 } }).message).toContain(`must be at most ${MAX_ATTEMPTS}`);
    expect(parseJobSpec({ ...valid, policies: { maxAttempts: MAX_ATTEMPTS } }).policies.maxAttempts).toBe(MAX_ATTEMPTS);
    expect(2 * MAX_ATTEMPTS).toBeLessThan(WORK_QUEUE.maxReceiveCount ?? 0);
  });

  it('refuses an unknown handler and lists the known ones', () => {
    const error = refusal({ ...valid, handler: 'nope' }, ['a', 'b']);
    expect(error.field).toBe('handler');
    expect(error.message).toContain('"nope"');
    expect(error.message).toContain('known: a, b');
  });

  it('refuses an oversize payload naming its size', () => {
    const error = refusal({ ...valid, payload: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES) } });
    expect(error.field).toBe('payload');
    expect(error.message).toMatch(/\d+ bytes.*at most 16384 bytes/);
  });
});

describe('parseJobSpec: the DST policy', () => {
  it('defaults to shift and once, and fills in a half-given policy', () => {
    expect(parseJobSpec(valid).dst).toEqual({ gap: 'shift', repeat: 'once' });
    expect(parseJobSpec({ ...valid, dst: { repeat: 'twice' } }).dst).toEqual({ gap: 'shift', repeat: 'twice' });
    expect(parseJobSpec({ ...valid, dst: { gap: 'skip', repeat: 'once' } }).dst).toEqual({ gap: 'skip', repeat: 'once' });
  });

  it.each([
    [{ gap: 'later' }, 'dst.gap', 'later', 'invalid dst.gap "later": must be "shift" (run at the wall time moved past the gap) or "skip"'],
    [{ repeat: 'thrice' }, 'dst.repeat', 'thrice', 'invalid dst.repeat "thrice": must be "once" (the first occurrence) or "twice"'],
    [{ repeat: 2 }, 'dst.repeat', 2, 'invalid dst.repeat 2: must be "once" (the first occurrence) or "twice"'],
    ['shift', 'dst', 'shift', 'invalid dst "shift": must be an object like {"gap": "shift", "repeat": "once"}'],
    [
      { gap: 'skip', when: 'always' },
      'dst',
      { gap: 'skip', when: 'always' },
      'invalid dst {"gap":"skip","when":"always"}: Unrecognized key: "when"',
    ],
  ])('refuses dst %j naming %s', (dst, field, value, message) => {
    const error = refusal({ ...valid, dst });
    expect(error.field).toBe(field);
    expect(error.value).toEqual(value);
    expect(error.message).toBe(message);
  });
});

describe("parseJobSpec: what SQS would refuse in the job's work messages", () => {
  it.each([
    [{ payload: { note: 'end\uffff' } }, 'payload.note', 'end<U+FFFF>', /holds U\+FFFF, a character SQS refuses/],
    [{ payload: { rows: ['ok', { deep: '\ufffe' }] } }, 'payload.rows.1.deep', '<U+FFFE>', /holds U\+FFFE/],
    [{ payload: { ['key\uffff']: 1 } }, 'payload[key]', 'key<U+FFFF>', /holds U\+FFFF/],
    [{ handler: 'h\uffff' }, 'handler', 'h<U+FFFF>', /holds U\+FFFF/],
  ])('refuses %j naming the field and the value', (change, field, value, message) => {
    const error = refusal({ ...valid, ...change });
    expect(error.field).toBe(field);
    expect(error.value).toBe(value);
    expect(error.message).toMatch(message);
  });

  it('accepts every character SQS accepts, astral ones and escaped controls included', () => {
    const payload = { text: 'tab\tnew\nline\r \ud7ff \ue000 \ufffd \u{10000} \u{10ffff} 😀 control\u0007' };
    expect(parseJobSpec({ ...valid, payload }).payload).toEqual(payload);
  });
});
