/**
 * Checks a drill's recorded history against the invariants. Pure: it reads
 * what the stores hold (slices, ledger, business effects, dead letters) and
 * what processes reported (events, renewals), and never trusts a process's
 * own verdict. Every process timestamp is corrected by that process's known
 * clock offset (observed.ts).
 */
import { executionKey } from '../../lib/core/execution-key.ts';
import type { MisfirePolicy, OverlapPolicy } from '../../lib/core/job-spec.ts';
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { distribution, type Distribution } from '../../lib/core/stats.ts';
import type { ExpectedOccurrence } from './expected.ts';
import {
  eventTime,
  groupBy,
  type DeadLetterEntry,
  type InjectedClientFault,
  type InjectedProcessFault,
  type ObservedEvent,
  type ObservedReceive,
  type ObservedRenewal,
} from './observed.ts';
import { committedThenDead, succeededWithoutWrites, type Effect } from './outcomes.ts';
import {
  failoverClass,
  findDisplacements,
  findFailovers,
  findOvertakenClaims,
  findOverlaps,
  type Displacement,
  type Failover,
  type FailoverClass,
  type Overlap,
} from './takeovers.ts';

export type {
  DeadLetterEntry,
  InjectedClientFault,
  InjectedProcessFault,
  ObservedEvent,
  ObservedReceive,
  ObservedRenewal,
} from './observed.ts';
export type { Effect } from './outcomes.ts';
export type { Displacement, Failover, Overlap } from './takeovers.ts';

export interface HistoryInput {
  readonly events: readonly ObservedEvent[];
  readonly renewals: readonly ObservedRenewal[];
  readonly processFaults: readonly InjectedProcessFault[];
  /** Throttled, hung and (simulated) slow requests; a failover whose path met one is reported apart (`slowedBy`). */
  readonly clientFaults?: readonly InjectedClientFault[];
  /** The workers' receives of work messages: each failover's standby receive (`Failover.receivedAt`). @default [] */
  readonly receives?: readonly ObservedReceive[];
  readonly slices: readonly Slice[];
  readonly ledger: readonly LedgerRecord[];
  readonly effects: readonly Effect[];
  /** What the dead-letter queue held at the end. @default [] */
  readonly deadLetters?: readonly DeadLetterEntry[];
  /** Expected occurrences, expanded independently from each job's recorded history over the drill window. */
  readonly expected: readonly ExpectedOccurrence[];
  /** A takeover sooner than this after the holder's last renewal displaced a healthy holder (see findDisplacements). @default 3000 */
  readonly holderSilenceMs?: number;
  /** The drill jobs' heartbeat: a takeover this soon after the holder's claim, before any renewal, displaced it. @default 1000 */
  readonly heartbeatMs?: number;
  /** Each job's misfire policy (absent: `all`): an occurrence in a SKIPPED misfire range is skipped by policy only under `latest` or `none`. */
  readonly misfireOf?: ReadonlyMap<string, MisfirePolicy>;
  /** Each job's overlap policy (absent: `allow`): which SKIPPED reasons (`overlap`, `replaced`) are its policy's. */
  readonly overlapOf?: ReadonlyMap<string, OverlapPolicy>;
  /** Each jittered job's start offset (core/jitter.ts): its start lag is measured from the nominal second plus this. */
  readonly startOffsetOf?: ReadonlyMap<string, number>;
  /** Occurrences scheduled before this are catch-up runs after an outage, late by design: not in the start lag. */
  readonly catchUpBefore?: number;
  /** Jobs whose starts wait by design (an overlap policy that buffers or skips behind a slow run): not in the start lag. */
  readonly lateByDesign?: ReadonlySet<string>;
}

export interface HistoryVerdict {
  readonly duplicates: string[];
  readonly missed: string[];
  readonly overlaps: Overlap[];
  readonly zombieCommitsRejected: number;
  /** Commits that landed for a fence older than the slice's last claim. Must be empty. */
  readonly zombieCommitsAccepted: string[];
  readonly fenceViolations: string[];
  readonly healthyHoldersDisplaced: Displacement[];
  readonly committedThenDead: string[];
  readonly succeededWithoutWrites: string[];
  /** SKIPPED slices that ended so because a change superseded their definition (not missed). */
  readonly skippedByChange: number;
  /** Expected occurrences SKIPPED by the job's own misfire policy (in a `misfire` range), not missed. */
  readonly skippedByPolicy: number;
  readonly failovers: Failover[];
  /** Failovers whose path met no injected AWS fault and whose fast takeover was armed: the invariant's bound applies to these. */
  readonly failover: Distribution;
  /** Failovers whose victim's or standby's requests on that slice (or the standby's SQS ones) were throttled or hung. */
  readonly failoverSlowedByAws: Distribution;
  /** Failovers of a claim that came back after its holder's own pause, its fast takeover disarmed by design (`Failover.claimAfterPause`). */
  readonly failoverAfterPausedClaim: Distribution;
  /** Failovers whose message another worker received and was then killed or paused holding (`Failover.messageHeldBy`). */
  readonly failoverAfterHolderOfMessageStopped: Distribution;
  /** Failovers that waited for a poller of the one worker left, every other stopped (`Failover.othersStopped`). */
  readonly failoverAfterOthersStopped: Distribution;
  /** Claims that returned after their message surfaced again and stood down unstarted, a standby having claimed first. */
  readonly overtakenClaims: number;
  readonly startLag: Distribution;
  readonly finalStates: Record<string, number>;
}

/** The drill jobs' lease minus heartbeat (the defaults, 4 s and 1 s): see findDisplacements. */
export const DEFAULT_HOLDER_SILENCE_MS = 3000;
export const DEFAULT_HEARTBEAT_MS = 1000;

export function checkHistory(input: HistoryInput): HistoryVerdict {
  const byKey = groupBy(input.events, (observed) => observed.event.executionKey);
  const claimsOf = (key: string): ObservedEvent[] =>
    (byKey.get(key) ?? []).filter((observed) => observed.event.type === 'claimed').sort((a, b) => eventTime(a) - eventTime(b));
  const sliceByKey = new Map(input.slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice]));
  const ledgerByKey = new Map(input.ledger.map((record) => [record.executionKey, record]));
  const effectsByKey = groupBy(input.effects, (effect) => effect.executionKey);
  const records = { sliceByKey, ledgerByKey, effectsByKey, eventsByKey: byKey, deadLetters: input.deadLetters ?? [] };

  const duplicates = [...effectsByKey].filter(([, effects]) => effects.length > 1).map(([key]) => key);
  const misfireRanges = groupBy(
    input.slices.filter(
      (slice) => slice.status === SliceStatus.Skipped && slice.skipReason === 'misfire' && slice.missedUntil !== undefined,
    ),
    (slice) => slice.jobId,
  );
  const finished = input.expected.map((expected) => {
    const slice = sliceByKey.get(expected.executionKey) ?? coveringRange(misfireRanges.get(expected.jobId), expected.scheduledAt);
    return {
      expected,
      verdict: finalVerdict(
        expected,
        slice,
        input.misfireOf?.get(expected.jobId) ?? 'all',
        input.overlapOf?.get(expected.jobId) ?? 'allow',
      ),
    };
  });
  const missed = finished.filter(({ verdict }) => verdict === 'missed').map(({ expected }) => expected.executionKey);

  const zombieCommitsAccepted: string[] = [];
  for (const [key, record] of ledgerByKey) {
    const slice = sliceByKey.get(key);
    const effects = effectsByKey.get(key) ?? [];
    if ((slice && record.fence !== slice.fence) || effects.some((effect) => effect.fence !== record.fence)) zombieCommitsAccepted.push(key);
  }

  // Every claim of a slice must have taken a fence no other claim took, and none above the stored one.
  // (Event times cannot order claims: a process stopped between its claim and its report reports late.)
  const fenceViolations: string[] = [];
  for (const key of byKey.keys()) {
    const fences = claimsOf(key).map((observed) => observed.event.fence);
    const stored = sliceByKey.get(key)?.fence ?? 0;
    if (new Set(fences).size !== fences.length || Math.max(0, ...fences) > stored) fenceViolations.push(key);
  }

  const failovers = findFailovers(input.processFaults, input.renewals, claimsOf, byKey, input.clientFaults ?? [], input.receives ?? []);
  const latencies = (kind: FailoverClass): Distribution =>
    distribution(failovers.filter((failover) => failoverClass(failover) === kind).map((failover) => failover.latencyMs));
  const startLags = input.events
    .filter(
      (observed) =>
        observed.event.type === 'started' &&
        Date.parse(observed.event.scheduledAt) >= (input.catchUpBefore ?? 0) &&
        !input.lateByDesign?.has(observed.event.jobId),
    )
    .map(
      (observed) => eventTime(observed) - Date.parse(observed.event.scheduledAt) - (input.startOffsetOf?.get(observed.event.jobId) ?? 0),
    );
  const finalStates: Record<string, number> = {};
  for (const slice of input.slices) finalStates[slice.status] = (finalStates[slice.status] ?? 0) + 1;

  return {
    duplicates,
    missed,
    overlaps: findOverlaps(byKey, claimsOf),
    zombieCommitsRejected: input.events.filter((observed) => observed.event.type === 'fenced_out').length,
    zombieCommitsAccepted,
    fenceViolations,
    healthyHoldersDisplaced: findDisplacements(byKey, input.renewals, input.processFaults, {
      minSilenceMs: input.holderSilenceMs ?? DEFAULT_HOLDER_SILENCE_MS,
      heartbeatMs: input.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    }),
    committedThenDead: committedThenDead(records),
    succeededWithoutWrites: succeededWithoutWrites(records),
    skippedByChange: finished.filter(({ verdict }) => verdict === 'skippedByChange').length,
    skippedByPolicy: finished.filter(({ verdict }) => verdict === 'skippedByPolicy').length,
    failovers,
    failover: latencies('bounded'),
    failoverSlowedByAws: latencies('slowedByAws'),
    failoverAfterPausedClaim: latencies('afterPausedClaim'),
    failoverAfterHolderOfMessageStopped: latencies('afterHolderOfMessageStopped'),
    failoverAfterOthersStopped: latencies('afterOthersStopped'),
    overtakenClaims: findOvertakenClaims(byKey).length,
    startLag: distribution(startLags),
    finalStates,
  };
}

/** The SKIPPED reasons each overlap policy gives (core/overlap-policy.ts). */
const OVERLAP_REASONS: Record<OverlapPolicy, readonly string[]> = {
  allow: [],
  skip: ['overlap'],
  bufferOne: ['overlap'],
  bufferAll: [],
  replace: ['replaced'],
};

/** The misfire range record (at its first occurrence, to `missedUntil`) that stands for `at`, if any. */
function coveringRange(ranges: readonly Slice[] | undefined, at: number): Slice | undefined {
  return ranges?.find((range) => range.scheduledAt <= at && at < (range.missedUntil ?? 0));
}

/**
 * An expected occurrence must end SUCCEEDED or DEAD; or SKIPPED by its job's
 * misfire policy (`latest`, `none`); or SKIPPED, with a
 * reason, by a change made once its definition was no longer live (it was
 * pending when the next change came). SKIPPED by the very change that made
 * its definition live means the new definition did not take it up: missed.
 */
function finalVerdict(
  expected: ExpectedOccurrence,
  slice: Slice | undefined,
  misfire: MisfirePolicy,
  overlap: OverlapPolicy,
): 'ran' | 'skippedByChange' | 'skippedByPolicy' | 'missed' {
  if (slice?.status === SliceStatus.Succeeded || slice?.status === SliceStatus.Dead) return 'ran';
  // Skipped by the job's own misfire or overlap policy: only a policy that skips for that reason may.
  if (slice?.status === SliceStatus.Skipped && slice.skipReason === 'misfire') return misfire === 'all' ? 'missed' : 'skippedByPolicy';
  if (slice?.status === SliceStatus.Skipped && (slice.skipReason === 'overlap' || slice.skipReason === 'replaced')) {
    return OVERLAP_REASONS[overlap].includes(slice.skipReason) ? 'skippedByPolicy' : 'missed';
  }
  if (slice?.status !== SliceStatus.Skipped || expected.supersededAt === undefined || slice.skipReason === undefined) return 'missed';
  const skippedAt = slice.finishedAt ?? 0;
  if (skippedAt < expected.supersededAt) return 'missed';
  // Skipped by the change that ended this definition: with that change's reason.
  if (skippedAt === expected.supersededAt && slice.skipReason !== expected.skipReason) return 'missed';
  return 'skippedByChange';
}
