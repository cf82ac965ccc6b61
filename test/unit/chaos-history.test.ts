import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import { lifecycleEvent, type LifecycleEventType } from '../../lib/core/events.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { ExpectedOccurrence } from '../../tools/chaos/expected.ts';
import { checkHistory, type HistoryInput, type ObservedEvent } from '../../tools/chaos/history.ts';
import { parseFaultRates } from '../../tools/chaos/config.ts';
import { dstClockOffsetMs, parseDstMode } from '../../tools/chaos/dst.ts';
import { planFaults, planLifecycle } from '../../tools/chaos/fault-plan.ts';
import type { Slice } from '../../lib/core/slice.ts';

const T = Date.parse('2026-11-29T12:00:00Z');
const KEY = executionKey('job', T);

function observed(type: LifecycleEventType, replica: string, at: number, fence: number, offsetMs = 0): ObservedEvent {
  return { replica, offsetMs, event: lifecycleEvent(type, { jobId: 'job', scheduledAt: T }, at + offsetMs, { fence, worker: replica }) };
}

function slice(fence: number, status: Slice['status'] = 'SUCCEEDED'): Slice {
  return {
    jobId: 'job',
    scheduledAt: T,
    status,
    fence,
    attempts: fence,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 1,
    createdAt: T,
  };
}

const expect1 = (jobId: string, scheduledAt: number): ExpectedOccurrence => ({
  executionKey: executionKey(jobId, scheduledAt),
  jobId,
  scheduledAt,
  generation: 1,
});
const base: HistoryInput = {
  events: [],
  renewals: [],
  processFaults: [],
  slices: [slice(1)],
  ledger: [{ executionKey: KEY, jobId: 'job', scheduledAt: T, fence: 1, owner: 'a', committedAt: T, outcome: 'SUCCEEDED' }],
  effects: [{ executionKey: KEY, fence: 1, worker: 'a' }],
  expected: [expect1('job', T)],
};

describe('chaos history checks', () => {
  it('counts an execution key with two business effects as a duplicate, and an expected key without a final slice as missed', () => {
    const verdict = checkHistory({
      ...base,
      effects: [
        { executionKey: KEY, fence: 1, worker: 'a' },
        { executionKey: KEY, fence: 2, worker: 'b' },
      ],
      expected: [expect1('job', T), expect1('other', T)],
    });
    expect(verdict.duplicates).toEqual([KEY]);
    expect(verdict.missed).toEqual([executionKey('other', T)]);
  });

  it('flags a ledger record whose fence is not the slice fence as an accepted zombie commit', () => {
    const ledger = [
      { executionKey: KEY, jobId: 'job', scheduledAt: T, fence: 1, owner: 'a', committedAt: T, outcome: 'SUCCEEDED' as const },
    ];
    expect(checkHistory({ ...base, slices: [slice(2)], ledger }).zombieCommitsAccepted).toEqual([KEY]);
    expect(checkHistory({ ...base, slices: [slice(1)], ledger }).zombieCommitsAccepted).toEqual([]);
  });

  it('flags two claims with one fence, but not claims reported out of order', () => {
    const sameFence = [observed('claimed', 'a', T, 1), observed('claimed', 'b', T + 100, 1)];
    expect(checkHistory({ ...base, events: sameFence }).fenceViolations).toEqual([KEY]);
    const lateReport = [observed('claimed', 'a', T + 5000, 1), observed('claimed', 'b', T + 4000, 2)];
    expect(checkHistory({ ...base, slices: [slice(2)], events: lateReport }).fenceViolations).toEqual([]);
  });

  it('measures failover from the victim’s last heartbeat of its latest claim to the standby’s claim, correcting clock offsets', () => {
    const events = [
      observed('claimed', 'victim', T, 1, 1500),
      observed('started', 'victim', T + 10, 1, 1500),
      observed('claimed', 'victim', T + 3000, 2, 1500), // its own message came back: it re-claimed
      observed('claimed', 'standby', T + 7100, 3, -800),
      observed('committed', 'standby', T + 7200, 3, -800),
    ];
    const verdict = checkHistory({
      ...base,
      slices: [slice(3)],
      events,
      renewals: [{ replica: 'victim', offsetMs: 1500, executionKey: KEY, fence: 2, at: T + 4000 + 1500 }],
      processFaults: [{ kind: 'kill', replica: 'victim', at: T + 4500 }],
    });
    expect(verdict.failovers).toHaveLength(1);
    expect(verdict.failovers[0]).toMatchObject({
      victim: 'victim',
      standby: 'standby',
      lastHeartbeatAt: T + 4000,
      takeoverAt: T + 7100,
      latencyMs: 3100,
    });
  });
});

describe('fault plan', () => {
  it('is the same for the same seed and differs for another', () => {
    const options = { durationMs: 120_000, faults: ['kill', 'pause', 'scannerKill'] as const, leaseMs: 4000 };
    const a = planFaults({ ...options, seed: 1, faults: [...options.faults] });
    expect(planFaults({ ...options, seed: 1, faults: [...options.faults] })).toEqual(a);
    expect(planFaults({ ...options, seed: 2, faults: [...options.faults] })).not.toEqual(a);
    expect(a.length).toBeGreaterThan(5);
    for (const fault of a) {
      expect(fault.atMs).toBeLessThan(120_000 - 8000);
      if (fault.kind === 'pause') expect(fault.pauseMs).toBeGreaterThan(4000);
    }
  });
});

describe('lifecycle plan, rates and DST mode', () => {
  it('plans lifecycle changes from the seed, inside the window, half of them on the preferred jobs', () => {
    const options = { seed: 3, durationMs: 120_000, jobCount: 100, preferred: [0, 8, 16] };
    const plan = planLifecycle(options);
    expect(planLifecycle(options)).toEqual(plan);
    expect(planLifecycle({ ...options, seed: 4 })).not.toEqual(plan);
    expect(plan.length).toBeGreaterThan(25);
    for (const change of plan) {
      expect(change.atMs).toBeGreaterThanOrEqual(5000);
      expect(change.atMs).toBeLessThan(110_000);
      expect(change.job).toBeLessThan(100);
    }
    const onPreferred = plan.filter((change) => options.preferred.includes(change.job)).length;
    expect(onPreferred / plan.length).toBeGreaterThan(0.3);
  });

  it('reads rate overrides and names a bad one', () => {
    expect(parseFaultRates('hang=0.01, throttle=0.1')).toEqual({ hang: 0.01, throttle: 0.1 });
    expect(() => parseFaultRates('hang=2')).toThrow('rate hang must be a probability from 0 to 1; got "2"');
    expect(() => parseFaultRates('hung=0.1')).toThrow('unknown rate "hung"');
  });

  it('puts the DST transition 40 % into the window, and reads --dst', () => {
    const realNow = Date.parse('2026-12-01T08:00:00Z');
    const offset = dstClockOffsetMs('spring', realNow, 100_000, 8000);
    expect(realNow + offset + 8000 + 40_000).toBe(Date.parse('2026-03-08T07:00:00Z'));
    expect(parseDstMode(true)).toBe('spring');
    expect(parseDstMode('fall')).toBe('fall');
    expect(parseDstMode(undefined)).toBeUndefined();
    expect(() => parseDstMode('winter')).toThrow('--dst must be one of spring, fall');
  });
});
