import { describe, expect, it } from 'vitest';
import { FencedOutError, OutcomeOnRecordError } from '../../lib/core/errors.ts';
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import {
  holdsLease,
  mayCreateSlice,
  mayDeferSweep,
  mayFinalize,
  maySettle,
  finalizeRefusal,
  refusedFinalize,
} from '../../lib/core/slice-transitions.ts';

describe('slice transitions', () => {
  it('renew, fail and finalize need the current fence of a running slice; finalize the owner too', () => {
    expect(holdsLease({ status: 'RUNNING', fence: 2 }, 2)).toBe(true);
    expect(holdsLease({ status: 'RUNNING', fence: 2 }, 1)).toBe(false);
    expect(holdsLease({ status: 'FAILED', fence: 2 }, 2)).toBe(false);
    expect(holdsLease(undefined, 0)).toBe(false);
    expect(mayFinalize({ status: 'RUNNING', fence: 2, owner: 'w1' }, 2, 'w1')).toBe(true);
    expect(mayFinalize({ status: 'RUNNING', fence: 2, owner: 'w1' }, 2, 'w2')).toBe(false);
  });

  it('a refused finalize is my earlier try, my claim with the other outcome, or fenced out', () => {
    const record: LedgerRecord = { executionKey: 'k', jobId: 'j', scheduledAt: 0, fence: 2, owner: 'w1', committedAt: 0, outcome: 'DEAD' };
    expect(refusedFinalize(record, 2, 'w1', 'DEAD')).toBe('own-earlier-try');
    expect(refusedFinalize(record, 2, 'w1', 'SUCCEEDED')).toBe('other-outcome-on-record');
    expect(refusedFinalize(record, 3, 'w1', 'DEAD')).toBe('fenced-out');
    expect(refusedFinalize(undefined, 2, 'w1', 'SUCCEEDED')).toBe('fenced-out');
  });

  it('the refusal both stores throw: none for my earlier try, OutcomeOnRecordError naming what is on record, else FencedOutError', () => {
    const record: LedgerRecord = { executionKey: 'k', jobId: 'j', scheduledAt: 0, fence: 2, owner: 'w1', committedAt: 0, outcome: 'DEAD' };
    expect(finalizeRefusal(record, { fence: 2, owner: 'w1', outcome: 'DEAD' }, 'k')).toBeUndefined();
    const onRecord = finalizeRefusal(record, { fence: 2, owner: 'w1', outcome: 'SUCCEEDED' }, 'k');
    expect(onRecord).toBeInstanceOf(OutcomeOnRecordError);
    expect((onRecord as OutcomeOnRecordError).recorded).toBe('DEAD');
    expect(finalizeRefusal(record, { fence: 2, owner: 'w2', outcome: 'DEAD' }, 'k')).toBeInstanceOf(FencedOutError);
    expect(finalizeRefusal(undefined, { fence: 2, owner: 'w1', outcome: 'DEAD' }, 'k', new Error('cause'))).toBeInstanceOf(FencedOutError);
  });

  it("a created slice (ENQUEUED, a range record, a change's SKIPPED) takes a missing instant or an older generation's unrun one; never a run or running one", () => {
    expect(mayCreateSlice(undefined, 1)).toBe(true);
    expect(mayCreateSlice({ status: 'SKIPPED', generation: 1 }, 2)).toBe(true);
    expect(mayCreateSlice({ status: 'FAILED', generation: 1 }, 2)).toBe(true);
    expect(mayCreateSlice({ status: 'ENQUEUED', generation: 2 }, 2)).toBe(false);
    for (const status of ['RUNNING', 'SUCCEEDED', 'DEAD', 'MISSED'] as const)
      expect(mayCreateSlice({ status, generation: 1 }, 2)).toBe(false);
  });

  it('a job change settles pending slices of older generations; a deferral needs the sweep time it read', () => {
    expect(maySettle({ status: 'ENQUEUED', generation: 1 }, 2)).toBe(true);
    expect(maySettle({ status: 'FAILED', generation: 1 }, 2)).toBe(true);
    expect(maySettle({ status: 'ENQUEUED', generation: 2 }, 2)).toBe(false);
    expect(maySettle({ status: 'RUNNING', generation: 1 }, 2)).toBe(false);
    expect(mayDeferSweep(5000, 5000)).toBe(true);
    expect(mayDeferSweep(6000, 5000)).toBe(false);
    expect(mayDeferSweep(undefined, 5000)).toBe(false);
  });
});
