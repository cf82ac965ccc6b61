/**
 * Checks a drill's recorded history against the invariants. Pure: it reads
 * what the stores hold (slices, ledger, business effects, dead letters) and
 * what processes reported (events, renewals), and never trusts a process's
 * own verdict. Every process timestamp is corrected by that process's known
 * clock offset (observed.ts).
 */
import { executionKey } from '../core/execution-key.ts';
import type { LedgerRecord } from '../core/ledger.ts';
import { SliceStatus, type Slice } from '../core/slice.ts';
import { distribution, type Distribution } from '../core/stats.ts';
import type { ExpectedOccurrence } from './expected.ts';
import { eventTime, groupBy, type DeadLetterEntry, type InjectedClientFault, type InjectedProcessFault, type ObservedEvent, type ObservedRenewal } from './observed.ts';
import { committedThenDead, succeededWithoutWrites, type Effect } from './outcomes.ts';
import { findDisplacements, findFailovers, findOvertakenClaims, findOverlaps, type Displacement, type Failover, type Overlap } from './takeovers.ts';

export type { DeadLetterEntry, InjectedClientFault, InjectedProcessFault, ObservedEvent, ObservedRenewal } from './observed.ts';
export type { Effect } from './outcomes.ts';
export type { Displacement, Failover, Overlap } from './takeovers.ts';

export interface HistoryInput {
  readonly events: readonly ObservedEvent[];
  readonly renewals: readonly ObservedRenewal[];
  readonly processFaults: readonly InjectedProcessFault[];
  /** Throttled and hung requests; a failover whose path met one is reported apart (`slowedBy`). */
  readonly clientFaults?: readonly InjectedClientFault[];
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
  readonly failovers: Failover[];
  /** Failovers whose path met no injected AWS fault: the invariant's bound applies to these. */
  readonly failover: Distribution;
  /** Failovers whose victim's or standby's requests on that slice (or the standby's SQS ones) were throttled or hung. */
  readonly failoverSlowedByAws: Distribution;
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
  const finished = input.expected.map((expected) => ({ expected, verdict: finalVerdict(expected, sliceByKey.get(expected.executionKey)) }));
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

  const failovers = findFailovers(input.processFaults, input.renewals, claimsOf, byKey, input.clientFaults ?? []);
  const unhindered = failovers.filter((failover) => failover.slowedBy === undefined);
  const startLags = input.events
    .filter((observed) => observed.event.type === 'started')
    .map((observed) => eventTime(observed) - Date.parse(observed.event.scheduledAt));
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
    failovers,
    failover: distribution(unhindered.map((failover) => failover.latencyMs)),
    failoverSlowedByAws: distribution(failovers.filter((failover) => failover.slowedBy !== undefined).map((failover) => failover.latencyMs)),
    overtakenClaims: findOvertakenClaims(byKey).length,
    startLag: distribution(startLags),
    finalStates,
  };
}

/**
 * An expected occurrence must end SUCCEEDED or DEAD; or SKIPPED, with a
 * reason, by a change made once its definition was no longer live (it was
 * pending when the next change came). SKIPPED by the very change that made
 * its definition live means the new definition did not take it up: missed.
 */
function finalVerdict(expected: ExpectedOccurrence, slice: Slice | undefined): 'ran' | 'skippedByChange' | 'missed' {
  if (slice?.status === SliceStatus.Succeeded || slice?.status === SliceStatus.Dead) return 'ran';
  if (slice?.status !== SliceStatus.Skipped || expected.supersededAt === undefined || slice.skipReason === undefined) return 'missed';
  const skippedAt = slice.finishedAt ?? 0;
  if (skippedAt < expected.supersededAt) return 'missed';
  // Skipped by the change that ended this definition: with that change's reason.
  if (skippedAt === expected.supersededAt && slice.skipReason !== expected.skipReason) return 'missed';
  return 'skippedByChange';
}
