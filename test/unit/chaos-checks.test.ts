/**
 * The drill's newer checks, on hand-made histories: expectations that follow
 * a job's lifecycle, healthy holders displaced, committed-then-dead and
 * SUCCEEDED without its business write.
 */
import { describe, expect, it } from 'vitest';
import { deadLetterEntry } from '../../tools/chaos/drill-stores.ts';
import {
  cronParserOccurrences,
  expectedOccurrences,
  scheduleMathOccurrences,
  type ExpectedOccurrence,
} from '../../tools/chaos/expected.ts';
import { checkHistory, type HistoryInput, type ObservedEvent } from '../../tools/chaos/history.ts';
import { JobHistoryBook, type JobHistory } from '../../tools/chaos/job-history.ts';
import { lifecycleEvent, type LifecycleEventType } from '../../lib/core/events.ts';
import { encodeWorkMessage } from '../../lib/core/messages.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import type { Slice } from '../../lib/core/slice.ts';
import { DEFAULT_DST_POLICY } from '../../lib/core/schedule.ts';

const T0 = Date.parse('2026-11-29T12:00:00Z');
const EVERY_10 = { schedule: '*/10 * * * * *', timeZone: 'UTC', enabled: true };
const s = (seconds: number): number => T0 + seconds * 1000;

function history(...changes: JobHistory['changes']): JobHistory {
  return { jobId: 'job', changes };
}

function slice(at: number, status: Slice['status'], extra: Partial<Slice> = {}): Slice {
  return {
    jobId: 'job',
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

function ledger(at: number, outcome: LedgerRecord['outcome'], fence = 1): LedgerRecord {
  return { executionKey: executionKey('job', at), jobId: 'job', scheduledAt: at, fence, owner: 'a', committedAt: at, outcome };
}

function observed(type: LifecycleEventType, replica: string, at: number, fence: number, offsetMs = 0, scheduledAt = T0): ObservedEvent {
  return { replica, offsetMs, event: lifecycleEvent(type, { jobId: 'job', scheduledAt }, at + offsetMs, { fence, worker: replica }) };
}

const empty: HistoryInput = { events: [], renewals: [], processFaults: [], slices: [], ledger: [], effects: [], expected: [] };

describe('expected occurrences follow each job’s recorded history', () => {
  const jobHistory = history(
    { kind: 'create', at: s(-100), generation: 1, definition: EVERY_10 },
    { kind: 'pause', at: s(25), generation: 2, definition: { ...EVERY_10, enabled: false } },
    { kind: 'resume', at: s(45), generation: 3, definition: EVERY_10 },
    { kind: 'schedule', at: s(62.5), generation: 4, definition: { ...EVERY_10, schedule: '5-59/10 * * * * *' } },
    { kind: 'delete', at: s(80), generation: 5 },
    { kind: 'readd', at: s(90), generation: 6, definition: EVERY_10 },
  );

  it('expects occurrences only while an enabled definition is live, from its change (inclusive) to the next (exclusive)', () => {
    const expected = expectedOccurrences([jobHistory], s(0), s(110));
    expect(expected.map((e) => (e.scheduledAt - T0) / 1000)).toEqual([0, 10, 20, 50, 60, 65, 75, 90, 100]);
    const at20 = expected.find((e) => e.scheduledAt === s(20));
    expect(at20).toMatchObject({ generation: 1, supersededAt: s(25), skipReason: 'paused' });
    expect(expected.find((e) => e.scheduledAt === s(75))).toMatchObject({ generation: 4, supersededAt: s(80), skipReason: 'deleted' });
    expect(expected.find((e) => e.scheduledAt === s(100))?.supersededAt).toBeUndefined();
  });

  it('counts the first occurrence at the change instant itself as the new definition’s', () => {
    const atChange = history(
      { kind: 'create', at: s(-5), generation: 1, definition: EVERY_10 },
      { kind: 'payload', at: s(10), generation: 2, definition: EVERY_10 },
    );
    const expected = expectedOccurrences([atChange], s(0), s(30));
    expect(expected.map((e) => [(e.scheduledAt - T0) / 1000, e.generation])).toEqual([
      [0, 1],
      [10, 2],
      [20, 2],
    ]);
  });

  it('enumerates the same instants through cron-parser and through the engine’s schedule math away from DST', () => {
    const definition = { schedule: '7,37 * * * * *', timeZone: 'Asia/Kolkata', enabled: true };
    expect(scheduleMathOccurrences(definition, s(0), s(300))).toEqual(cronParserOccurrences(definition, s(0), s(300)));
  });

  it('records a change only when the stored generation moved', () => {
    const book = new JobHistoryBook();
    const job = {
      id: 'job',
      schedule: '* * * * *',
      timeZone: 'UTC',
      dst: DEFAULT_DST_POLICY,
      handler: 'h',
      enabled: true,
      policies: DEFAULT_POLICIES,
      shard: 0,
      nextFireAt: 0,
      version: 1,
      generation: 1,
      createdAt: T0,
      updatedAt: T0,
    } satisfies StoredJob;
    expect(book.record('create', job)).toBe(true);
    expect(book.record('pause', { ...job, version: 2 })).toBe(false); // a scanner advance: same generation
    expect(book.record('delete', { id: 'job', deleted: true, generation: 2, version: 3, updatedAt: T0 + 5 })).toBe(true);
    expect(book.current('job')).toEqual({ kind: 'delete', at: T0 + 5, generation: 2, definition: undefined });
    expect(book.count()).toBe(1);
  });
});

describe('missed, under lifecycle changes', () => {
  const occurrence: ExpectedOccurrence = {
    executionKey: executionKey('job', s(20)),
    jobId: 'job',
    scheduledAt: s(20),
    generation: 1,
    supersededAt: s(25),
    skipReason: 'paused',
  };
  const verdictOf = (sliceAt: Slice | undefined, expected: ExpectedOccurrence = occurrence) =>
    checkHistory({ ...empty, slices: sliceAt ? [sliceAt] : [], expected: [expected] });

  it('accepts a pending occurrence SKIPPED by the change that ended its definition, with that change’s reason', () => {
    const verdict = verdictOf(slice(s(20), 'SKIPPED', { skipReason: 'paused', finishedAt: s(25) }));
    expect(verdict.missed).toEqual([]);
    expect(verdict.skippedByChange).toBe(1);
  });

  it('counts as missed: SKIPPED before its definition ended, with another reason, with no later change, or no slice at all', () => {
    expect(verdictOf(slice(s(20), 'SKIPPED', { skipReason: 'superseded', finishedAt: s(5) })).missed).toHaveLength(1);
    expect(verdictOf(slice(s(20), 'SKIPPED', { skipReason: 'deleted', finishedAt: s(25) })).missed).toHaveLength(1);
    expect(
      verdictOf(slice(s(20), 'SKIPPED', { skipReason: 'paused', finishedAt: s(25) }), {
        ...occurrence,
        supersededAt: undefined,
        skipReason: undefined,
      }).missed,
    ).toHaveLength(1);
    expect(verdictOf(undefined).missed).toHaveLength(1);
    expect(verdictOf(slice(s(20), 'ENQUEUED')).missed).toHaveLength(1);
  });

  it('accepts a slice an older definition had claimed and ran to the end (SUCCEEDED or DEAD)', () => {
    expect(verdictOf(slice(s(20), 'SUCCEEDED', { generation: 0 })).missed).toEqual([]);
    expect(verdictOf(slice(s(20), 'DEAD')).missed).toEqual([]);
  });
});

describe('healthy holders displaced', () => {
  const KEY = executionKey('job', T0);
  const renewal = (replica: string, fence: number, at: number, offsetMs = 0) => ({
    replica,
    offsetMs,
    executionKey: KEY,
    fence,
    at: at + offsetMs,
  });

  it('flags a takeover by another worker less than one visibility window after the holder’s last renewal, on the drill’s clock', () => {
    const verdict = checkHistory({
      ...empty,
      events: [
        observed('claimed', 'holder', T0, 1, 1800),
        observed('claimed', 'standby', T0 + 2600, 2, -1900),
        observed('fenced_out', 'holder', T0 + 3100, 1, 1800),
      ],
      renewals: [renewal('holder', 1, T0 + 1000, 1800), renewal('holder', 1, T0 + 2000, 1800)],
    });
    expect(verdict.healthyHoldersDisplaced).toEqual([
      {
        executionKey: KEY,
        holder: 'holder',
        holderFence: 1,
        standby: 'standby',
        lastRenewalAt: T0 + 2000,
        takeoverAt: T0 + 2600,
        silenceMs: 600,
      },
    ]);
  });

  it('flags a takeover before the holder’s first renewal was due', () => {
    const verdict = checkHistory({ ...empty, events: [observed('claimed', 'holder', T0, 1), observed('claimed', 'standby', T0 + 700, 2)] });
    expect(verdict.healthyHoldersDisplaced.map((d) => d.silenceMs)).toEqual([700]);
  });

  it('does not flag a takeover after the holder went silent for the window, was killed or paused, or ended its attempt itself (its overlap gate buffering it too)', () => {
    const claims = [observed('claimed', 'holder', T0, 1), observed('claimed', 'standby', T0 + 2600, 2)];
    const renewals = [renewal('holder', 1, T0 + 1000)];
    const silent = checkHistory({
      ...empty,
      events: [observed('claimed', 'holder', T0, 1), observed('claimed', 'standby', T0 + 4100, 2)],
      renewals,
    });
    const killed = checkHistory({
      ...empty,
      events: claims,
      renewals,
      processFaults: [{ kind: 'kill', replica: 'holder', at: T0 + 1200 }],
    });
    const paused = checkHistory({
      ...empty,
      events: claims,
      renewals,
      processFaults: [{ kind: 'pause', replica: 'holder', at: T0 + 1100, until: T0 + 7000 }],
    });
    const failed = checkHistory({ ...empty, events: [...claims, observed('failed', 'holder', T0 + 2650, 1)], renewals });
    const ownReclaim = checkHistory({
      ...empty,
      events: [observed('claimed', 'holder', T0, 1), observed('claimed', 'holder', T0 + 1500, 2)],
    });
    // Its claim took longer than the lease: it gave the lease up at once, before the standby came.
    const gaveUp = checkHistory({ ...empty, events: [...claims, observed('fenced_out', 'holder', T0 + 20, 1)] });
    // No renewal yet, and its first one was due: its message's visibility counts from before its claim's report.
    const neverRenewed = checkHistory({
      ...empty,
      events: [observed('claimed', 'holder', T0, 1), observed('claimed', 'standby', T0 + 2990, 2)],
    });
    // Its overlap gate put the claim back to wait (bufferOne), and another worker claimed the slice when it came back.
    const buffered = checkHistory({ ...empty, events: [...claims, observed('buffered', 'holder', T0 + 100, 1)], renewals });
    for (const verdict of [silent, killed, paused, failed, ownReclaim, gaveUp, neverRenewed, buffered])
      expect(verdict.healthyHoldersDisplaced).toEqual([]);
  });

  it('counts a claim its message outran, overtaken before it started, apart; once it started or renewed, a takeover is a displacement', () => {
    const overtakeable = (event: ObservedEvent): ObservedEvent => ({ ...event, event: { ...event.event, overtakeable: true } });
    const slowClaim = overtakeable(observed('claimed', 'holder', T0, 1));
    const overtaken = checkHistory({
      ...empty,
      events: [slowClaim, observed('claimed', 'standby', T0 + 200, 2), observed('fenced_out', 'holder', T0 + 300, 1)],
    });
    expect(overtaken.healthyHoldersDisplaced).toEqual([]);
    expect(overtaken.overtakenClaims).toBe(1);
    const started = checkHistory({
      ...empty,
      events: [slowClaim, observed('started', 'holder', T0 + 100, 1), observed('claimed', 'standby', T0 + 200, 2)],
    });
    expect(started.healthyHoldersDisplaced).toHaveLength(1);
    expect(started.overtakenClaims).toBe(0);
    const renewed = checkHistory({
      ...empty,
      events: [slowClaim, observed('claimed', 'standby', T0 + 1500, 2)],
      renewals: [renewal('holder', 1, T0 + 1000)],
    });
    expect(renewed.healthyHoldersDisplaced).toHaveLength(1);
    const fastClaim = checkHistory({
      ...empty,
      events: [
        observed('claimed', 'holder', T0, 1),
        observed('claimed', 'standby', T0 + 200, 2),
        observed('fenced_out', 'holder', T0 + 300, 1),
      ],
    });
    expect(fastClaim.healthyHoldersDisplaced).toHaveLength(1);
  });
});

describe('failovers slowed by injected AWS faults', () => {
  const KEY = executionKey('job', T0);
  const killedHolder = {
    ...empty,
    events: [observed('claimed', 'victim', T0, 1), observed('claimed', 'standby', T0 + 6000, 2)],
    processFaults: [{ kind: 'kill' as const, replica: 'victim', at: T0 + 500 }],
  };

  it('reports a failover apart when a request about its slice, or the standby’s SQS request, was throttled or hung on the way', () => {
    const hungClaim = checkHistory({
      ...killedHolder,
      clientFaults: [{ kind: 'hang', replica: 'standby', at: T0 + 3000, executionKey: KEY, request: 'UpdateItemCommand' }],
    });
    expect(hungClaim.failovers).toMatchObject([{ latencyMs: 6000, slowedBy: 'hang' }]);
    expect(hungClaim.failover.count).toBe(0);
    expect(hungClaim.failoverSlowedByAws).toMatchObject({ count: 1, max: 6000 });
    const hungReceive = checkHistory({
      ...killedHolder,
      clientFaults: [{ kind: 'hang', replica: 'standby', at: T0 + 2000, request: 'ReceiveMessageCommand' }],
    });
    expect(hungReceive.failovers[0]?.slowedBy).toBe('hang');
    // The simulation's latency tail: the standby's receive brought the slice's message back over 1.2 s.
    const slowReceive = checkHistory({
      ...killedHolder,
      clientFaults: [{ kind: 'slow', replica: 'standby', at: T0 + 4500, executionKey: KEY, request: 'sqs.receive' }],
    });
    expect(slowReceive.failovers[0]?.slowedBy).toBe('slow');
    expect(slowReceive.failover.count).toBe(0);
    // The victim's own long poll, open when it stopped, took the message back over a slow leg; or its receive before
    // its claim was slow (a claim read late disarms); one a message visibility before its last heartbeat slowed nothing.
    const ownPoll = (at: number) =>
      checkHistory({
        ...killedHolder,
        clientFaults: [{ kind: 'slow', replica: 'victim', at, executionKey: KEY, request: 'ReceiveMessageCommand' }],
      });
    expect(ownPoll(T0 + 2500).failovers[0]?.slowedBy).toBe('slow');
    expect(ownPoll(T0 - 100).failovers[0]?.slowedBy).toBe('slow');
    expect(ownPoll(T0 - 3100).failover).toMatchObject({ count: 1, max: 6000 });
    // A victim that disarmed at its first renewal, after a slow receive, and renewed for 4 s more: the receive that
    // disarmed it is on its path while it stays disarmed.
    const renewals = [1000, 2000, 3000, 4000].map((at, i) => ({
      replica: 'victim',
      offsetMs: 0,
      executionKey: KEY,
      fence: 1,
      at: T0 + at,
      ...(i === 0 && { disarmed: true as const }),
    }));
    const lateRead = (disarmed: boolean) =>
      checkHistory({
        ...killedHolder,
        events: [observed('claimed', 'victim', T0, 1), observed('claimed', 'standby', T0 + 12_000, 2)],
        processFaults: [{ kind: 'kill', replica: 'victim', at: T0 + 4500 }],
        renewals: disarmed ? renewals : renewals.map(({ disarmed: _, ...renewal }) => renewal),
        clientFaults: [{ kind: 'slow', replica: 'victim', at: T0 - 1500, executionKey: KEY, request: 'ReceiveMessageCommand' }],
      });
    expect(lateRead(true).failovers).toMatchObject([{ latencyMs: 8000, disarmed: true, slowedBy: 'slow' }]);
    expect(lateRead(false).failover).toMatchObject({ count: 1, max: 8000 });
  });

  it('reports a failover apart when the standby’s read of the slice’s job before its claim was throttled (the job read names the job)', () => {
    const jobRead = (replica: string, jobIds: string[]) => ({
      kind: 'throttle' as const,
      replica,
      at: T0 + 3000,
      request: 'GetItemCommand',
      jobIds,
    });
    expect(checkHistory({ ...killedHolder, clientFaults: [jobRead('standby', ['job'])] }).failovers[0]?.slowedBy).toBe('throttle');
    // A worker that received the message before the standby, its job read throttled (it hid the message to retry):
    // apart too. Another job's read, or a read of this job by a worker that never had the message: bounded.
    const receivedFirst = [{ replica: 'third', executionKey: KEY, at: T0 + 2900, messageId: 'm', receiveCount: 2 }];
    expect(
      checkHistory({ ...killedHolder, receives: receivedFirst, clientFaults: [jobRead('third', ['job'])] }).failovers[0]?.slowedBy,
    ).toBe('throttle');
    expect(checkHistory({ ...killedHolder, clientFaults: [jobRead('standby', ['other'])] }).failovers[0]?.slowedBy).toBeUndefined();
    expect(checkHistory({ ...killedHolder, clientFaults: [jobRead('third', ['job'])] }).failovers[0]?.slowedBy).toBeUndefined();
  });

  it('reports a failover apart when the victim’s own request about the slice was refused within a visibility before its last heartbeat', () => {
    const heartbeat = { replica: 'victim', offsetMs: 0, executionKey: KEY, fence: 1, at: T0 + 400 };
    const refused = (request: string, at = T0 + 100) => ({ kind: 'throttle' as const, replica: 'victim', at, executionKey: KEY, request });
    for (const request of ['ChangeMessageVisibilityBatchCommand', 'ChangeMessageVisibilityCommand', 'UpdateItemCommand']) {
      const refusedRenewal = checkHistory({ ...killedHolder, renewals: [heartbeat], clientFaults: [refused(request)] });
      expect(refusedRenewal.failovers[0]?.slowedBy, request).toBe('throttle');
    }
    // Longer ago than a visibility, or another replica's: the failover is bounded.
    const longAgo = checkHistory({
      ...killedHolder,
      renewals: [{ ...heartbeat, at: T0 + 3500 }],
      processFaults: [{ kind: 'kill', replica: 'victim', at: T0 + 3600 }],
      clientFaults: [refused('ChangeMessageVisibilityBatchCommand')],
    });
    expect(longAgo.failovers[0]?.slowedBy).toBeUndefined();
    const third = checkHistory({
      ...killedHolder,
      renewals: [heartbeat],
      clientFaults: [{ ...refused('TransactWriteItemsCommand'), replica: 'third' }],
    });
    expect(third.failovers[0]?.slowedBy).toBeUndefined();
  });

  it('bounds a failover whose victim had only its business writes about the slice refused (a settlement’s chunk commits)', () => {
    // A CI settlement drill: each of its two takeovers (3,093 and 3,060 ms) was put apart by a throttled chunk
    // transaction of its victim, which slows no renewal; the settlement then had no bounded failover at all.
    const heartbeat = { replica: 'victim', offsetMs: 0, executionKey: KEY, fence: 1, at: T0 + 400 };
    const chunkCommits = [100, 450].map((ms) => ({
      kind: 'throttle' as const,
      replica: 'victim',
      at: T0 + ms,
      executionKey: KEY,
      request: 'TransactWriteItemsCommand',
    }));
    const verdict = checkHistory({
      ...killedHolder,
      renewals: [heartbeat],
      clientFaults: [...chunkCommits, { ...chunkCommits[0]!, kind: 'hang' as const, at: T0 + 480 }],
    });
    expect(verdict.failovers[0]?.slowedBy).toBeUndefined();
    expect(verdict.failover).toMatchObject({ count: 1, max: 5600 });
  });

  it('reports apart the failover of a claim that came back after its holder’s own pause (its fast takeover disarmed by design)', () => {
    // Paused while its receive was in flight, the victim claimed when it resumed, its message possibly handed on
    // (`overtakeable`); killed later, its standby waited for the lease and the skew margin (a 300 s drill: 7,082 ms).
    const lateClaim = (overtakeable: boolean): ObservedEvent => ({
      ...observed('claimed', 'victim', T0, 1),
      event: { ...observed('claimed', 'victim', T0, 1).event, ...(overtakeable && { overtakeable }) },
    });
    const pause = { kind: 'pause' as const, replica: 'victim', at: T0 - 6000, until: T0 - 100 };
    const kill = { kind: 'kill' as const, replica: 'victim', at: T0 + 2000 };
    const afterPause = checkHistory({
      ...empty,
      events: [lateClaim(true), observed('claimed', 'standby', T0 + 9000, 2)],
      processFaults: [pause, kill],
    });
    expect(afterPause.failovers).toMatchObject([{ latencyMs: 9000, claimAfterPause: true }]);
    expect(afterPause.failover.count).toBe(0);
    expect(afterPause.failoverAfterPausedClaim).toMatchObject({ count: 1, max: 9000 });
    // Not overtakeable, or overtakeable with no pause of its own before the claim: bounded as any failover.
    const armed = checkHistory({
      ...empty,
      events: [lateClaim(false), observed('claimed', 'standby', T0 + 9000, 2)],
      processFaults: [pause, kill],
    });
    expect(armed.failover).toMatchObject({ count: 1, max: 9000 });
    expect(armed.failoverAfterPausedClaim.count).toBe(0);
    const noPause = checkHistory({
      ...empty,
      events: [lateClaim(true), observed('claimed', 'standby', T0 + 9000, 2)],
      processFaults: [kill],
    });
    expect(noPause.failover).toMatchObject({ count: 1, max: 9000 });
    const pausedLongBefore = checkHistory({
      ...empty,
      events: [lateClaim(true), observed('claimed', 'standby', T0 + 9000, 2)],
      processFaults: [{ ...pause, until: T0 - 4000 }, kill],
    });
    expect(pausedLongBefore.failover).toMatchObject({ count: 1, max: 9000 });
  });

  it('times the standby’s receive of the message it claimed with: its last receive of that slice since the victim’s last heartbeat', () => {
    const receive = (replica: string, at: number, key = KEY) => ({ replica, executionKey: key, at });
    const verdict = checkHistory({
      ...killedHolder,
      receives: [
        receive('victim', T0 + 10),
        receive('standby', T0 - 50),
        receive('standby', T0 + 5200),
        receive('standby', T0 + 5900),
        receive('third', T0 + 5950),
        receive('standby', T0 + 5980, executionKey('other', T0)),
        receive('standby', T0 + 6100),
      ],
    });
    expect(verdict.failovers).toMatchObject([{ latencyMs: 6000, receivedAt: T0 + 5900 }]);
    expect(checkHistory(killedHolder).failovers[0]?.receivedAt).toBeUndefined();
  });

  it('reports apart a failover whose message another worker received and was killed or paused holding (a second fault)', () => {
    // A 300 s drill: the victim paused; the first worker to receive its message was killed 1.1 s later, before its
    // claim; the message came back a visibility timeout after that receive, to the standby (6,127 ms in all).
    const receive = (replica: string, at: number) => ({ replica, executionKey: KEY, at });
    const firstHolder = (faultAt: number, kind: 'kill' | 'pause' = 'kill') =>
      checkHistory({
        ...killedHolder,
        receives: [receive('first', T0 + 3000), receive('standby', T0 + 5950)],
        processFaults: [
          ...killedHolder.processFaults,
          { kind, replica: 'first', at: faultAt, ...(kind === 'pause' && { until: faultAt + 5000 }) },
        ],
      });
    const killed = firstHolder(T0 + 4100);
    expect(killed.failovers).toMatchObject([{ latencyMs: 6000, messageHeldBy: 'first' }]);
    expect(killed.failover.count).toBe(0);
    expect(killed.failoverAfterHolderOfMessageStopped).toMatchObject({ count: 1, max: 6000 });
    expect(firstHolder(T0 + 3500, 'pause').failovers[0]?.messageHeldBy).toBe('first');
    // Already paused or dead when its long poll, open on the server, took the message: it held it all the same.
    expect(firstHolder(T0 + 2500, 'pause').failovers[0]?.messageHeldBy).toBe('first');
    expect(firstHolder(T0 + 2800).failovers[0]?.messageHeldBy).toBe('first');
    // A pause over before the receive held nothing.
    expect(firstHolder(T0 - 2500, 'pause').failovers[0]?.messageHeldBy).toBeUndefined();
    // Stopped after its receive's visibility ran out (the message was back by then), or after the takeover: bounded.
    for (const late of [
      firstHolder(T0 + 6050),
      checkHistory({
        ...killedHolder,
        receives: [receive('first', T0 + 3000)],
        processFaults: [...killedHolder.processFaults, { kind: 'kill' as const, replica: 'first', at: T0 + 6500 }],
      }),
    ]) {
      expect(late.failovers[0]?.messageHeldBy).toBeUndefined();
      expect(late.failover.count).toBe(1);
    }
    // A first receiver that stood down (no fault) leaves the failover bounded.
    expect(checkHistory({ ...killedHolder, receives: [receive('first', T0 + 3000)] }).failover).toMatchObject({ count: 1, max: 6000 });
  });

  it('reports apart a failover whose standby was itself paused on the way (holding the message, or with no other worker running)', () => {
    const standbyPaused = (at: number, until: number) =>
      checkHistory({
        ...killedHolder,
        processFaults: [...killedHolder.processFaults, { kind: 'pause' as const, replica: 'standby', at, until }],
      });
    expect(standbyPaused(T0 + 1000, T0 + 5900).failovers).toMatchObject([{ latencyMs: 6000, messageHeldBy: 'standby' }]);
    expect(standbyPaused(T0 + 1000, T0 + 5900).failover.count).toBe(0);
    // Begun before the victim's last heartbeat and still on after it.
    expect(standbyPaused(T0 - 3000, T0 + 2000).failovers[0]?.messageHeldBy).toBe('standby');
    // Over before the last heartbeat, or begun after the takeover: bounded.
    for (const [at, until] of [
      [T0 - 6000, T0 - 1000],
      [T0 + 6500, T0 + 9000],
    ] as const) {
      expect(standbyPaused(at, until).failover).toMatchObject({ count: 1, max: 6000 });
    }
  });

  it('reports apart a failover that waited for a poller of the one worker left, every other killed or paused when the message surfaced', () => {
    // A simulated seed (aws 7478): the victim and the third worker paused; the standby's four batches were all in flight
    // for 2.2 s after the victim's message surfaced (3 s after its last heartbeat), and it received the message then.
    const third = observed('claimed', 'worker-3.1', T0 - 9000, 1, 0, T0 - 60_000);
    const oneLeft = (thirdStopped: { kind: 'pause' | 'kill'; at: number; until?: number } | undefined, receivedAt: number) =>
      checkHistory({
        ...killedHolder,
        events: [...killedHolder.events, third],
        receives: [{ replica: 'standby', executionKey: KEY, at: receivedAt }],
        processFaults: [...killedHolder.processFaults, ...(thirdStopped ? [{ ...thirdStopped, replica: 'worker-3.1' }] : [])],
      });
    const paused = oneLeft({ kind: 'pause', at: T0 + 1000, until: T0 + 8000 }, T0 + 5200);
    expect(paused.failovers).toMatchObject([{ latencyMs: 6000, othersStopped: true }]);
    expect(paused.failover.count).toBe(0);
    expect(paused.failoverAfterOthersStopped).toMatchObject({ count: 1, max: 6000 });
    // Killed just before the surfacing, its replacement not yet running.
    expect(oneLeft({ kind: 'kill', at: T0 + 2800 }, T0 + 5200).failovers[0]?.othersStopped).toBe(true);
    for (const bounded of [
      // Another worker was running when the message surfaced: a free poller could have taken it.
      oneLeft(undefined, T0 + 5200),
      oneLeft({ kind: 'pause', at: T0 + 3500, until: T0 + 8000 }, T0 + 5200),
      oneLeft({ kind: 'kill', at: T0 + 2000 }, T0 + 5200),
      // Received within a long poll of the surfacing: no wait for a poller.
      oneLeft({ kind: 'pause', at: T0 + 1000, until: T0 + 8000 }, T0 + 3900),
    ]) {
      expect(bounded.failovers[0]?.othersStopped).toBeUndefined();
      expect(bounded.failover).toMatchObject({ count: 1, max: 6000 });
    }
  });

  it('tells a failover whose victim disarmed its fast takeover before the fault (a renewal reported `disarmed`), and keeps it bounded', () => {
    const renewal = (at: number, disarmed = false) => ({
      replica: 'victim',
      offsetMs: 0,
      executionKey: KEY,
      fence: 1,
      at,
      ...(disarmed && { disarmed: true as const }),
    });
    const disarmedBefore = checkHistory({ ...killedHolder, renewals: [renewal(T0 + 100, true), renewal(T0 + 400)] });
    expect(disarmedBefore.failovers).toMatchObject([{ latencyMs: 5600, disarmed: true }]);
    expect(disarmedBefore.failover.count).toBe(1);
    // A disarming renewal after the fault (its report read late) is not the victim's before the fault.
    expect(
      checkHistory({ ...killedHolder, renewals: [renewal(T0 + 400), renewal(T0 + 900, true)] }).failovers[0]?.disarmed,
    ).toBeUndefined();
  });

  it('counts one failover per takeover, from the victim’s last fault before it', () => {
    const renewals = [1000, 2000].map((ms) => ({ replica: 'victim', offsetMs: 0, executionKey: KEY, fence: 1, at: T0 + ms }));
    const verdict = checkHistory({
      ...killedHolder,
      renewals,
      processFaults: [
        // A pause it came back from, renewing after; then the kill; then a pause of the replaced process after the takeover.
        { kind: 'pause' as const, replica: 'victim', at: T0 + 300, until: T0 + 800 },
        { kind: 'kill' as const, replica: 'victim', at: T0 + 2500 },
        { kind: 'pause' as const, replica: 'victim', at: T0 + 7000, until: T0 + 9000 },
      ],
    });
    expect(verdict.failovers).toMatchObject([{ fault: 'kill', lastHeartbeatAt: T0 + 2000, latencyMs: 4000 }]);
    expect(verdict.failover).toMatchObject({ count: 1, max: 4000 });
  });

  it('counts no failover when the victim’s overlap gate had given the claim back, even reported after its pause', () => {
    const paused = { ...killedHolder, processFaults: [{ kind: 'pause' as const, replica: 'victim', at: T0 + 200, until: T0 + 7000 }] };
    expect(checkHistory(paused).failovers).toHaveLength(1);
    const bufferedLate = checkHistory({ ...paused, events: [...paused.events, observed('buffered', 'victim', T0 + 7100, 1)] });
    expect(bufferedLate.failovers).toEqual([]);
  });

  it('bounds a failover whose faults were elsewhere: another slice, another replica’s SQS request, or outside the window', () => {
    const elsewhere = checkHistory({
      ...killedHolder,
      clientFaults: [
        { kind: 'hang', replica: 'standby', at: T0 + 3000, executionKey: executionKey('other', T0), request: 'PutItemCommand' },
        { kind: 'throttle', replica: 'third', at: T0 + 3000, request: 'ReceiveMessageCommand' },
        { kind: 'hang', replica: 'third', at: T0 + 3000, request: 'ReceiveMessageCommand' },
        { kind: 'hang', replica: 'standby', at: T0 + 6500, executionKey: KEY, request: 'PutItemCommand' },
      ],
    });
    expect(elsewhere.failovers[0]?.slowedBy).toBeUndefined();
    expect(elsewhere.failover).toMatchObject({ count: 1, max: 6000 });
    expect(elsewhere.failoverSlowedByAws.count).toBe(0);
  });
});

describe('committed then dead, and SUCCEEDED without writes', () => {
  const KEY = executionKey('job', T0);

  it('flags a committed slice with a dead event or a dead-letter record, and a DEAD ledger with a committed event', () => {
    const committed = {
      slices: [slice(T0, 'SUCCEEDED')],
      ledger: [ledger(T0, 'SUCCEEDED')],
      effects: [{ executionKey: KEY, fence: 1, worker: 'a' }],
    };
    expect(checkHistory({ ...empty, ...committed }).committedThenDead).toEqual([]);
    expect(checkHistory({ ...empty, ...committed, events: [observed('dead', 'a', T0 + 10, 1)] }).committedThenDead).toEqual([KEY]);
    expect(checkHistory({ ...empty, ...committed, deadLetters: [{ executionKey: KEY, kind: 'dead-slice' }] }).committedThenDead).toEqual([
      KEY,
    ]);
    const dead = { slices: [slice(T0, 'DEAD')], ledger: [ledger(T0, 'DEAD')] };
    expect(checkHistory({ ...empty, ...dead, deadLetters: [{ executionKey: KEY, kind: 'dead-slice' }] }).committedThenDead).toEqual([]);
    expect(checkHistory({ ...empty, ...dead, events: [observed('committed', 'a', T0 + 10, 1)] }).committedThenDead).toEqual([KEY]);
  });

  it('flags a SUCCEEDED slice whose committing fence left no business row, or that has no ledger record', () => {
    const succeeded = { slices: [slice(T0, 'SUCCEEDED', { fence: 2 })], ledger: [ledger(T0, 'SUCCEEDED', 2)] };
    expect(
      checkHistory({ ...empty, ...succeeded, effects: [{ executionKey: KEY, fence: 2, worker: 'a' }] }).succeededWithoutWrites,
    ).toEqual([]);
    expect(checkHistory({ ...empty, ...succeeded }).succeededWithoutWrites).toEqual([KEY]);
    expect(
      checkHistory({ ...empty, ...succeeded, effects: [{ executionKey: KEY, fence: 1, worker: 'a' }] }).succeededWithoutWrites,
    ).toEqual([KEY]);
    expect(
      checkHistory({ ...empty, slices: succeeded.slices, effects: [{ executionKey: KEY, fence: 2, worker: 'a' }] }).succeededWithoutWrites,
    ).toEqual([KEY]);
  });

  it('reads the slice a dead-letter record names, whatever its kind', () => {
    const body = encodeWorkMessage({ jobId: 'job', scheduledAt: T0 });
    expect(deadLetterEntry(JSON.stringify({ kind: 'dead-slice', executionKey: KEY, attempts: 3 }))).toEqual({
      executionKey: KEY,
      kind: 'dead-slice',
    });
    expect(deadLetterEntry(JSON.stringify({ kind: 'unrunnable-message', queue: 'work', reason: 'no such slice', body }))).toEqual({
      executionKey: KEY,
      kind: 'unrunnable-message',
    });
    expect(deadLetterEntry(body)).toEqual({ executionKey: KEY, kind: 'redriven' });
    expect(deadLetterEntry('not json')).toBeUndefined();
  });
});
