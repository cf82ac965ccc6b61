/**
 * Checks a drill's recorded history against the invariants. Pure: it reads
 * what the stores hold (slices, ledger, business effects) and what processes
 * reported (events, renewals), and never trusts a process's own verdict.
 * Every process timestamp is corrected by that process's known clock offset.
 */
import type { LifecycleEvent } from '../core/events.ts';
import { executionKey } from '../core/execution-key.ts';
import type { LedgerRecord } from '../core/ledger.ts';
import type { Slice } from '../core/slice.ts';
import { distribution, type Distribution } from '../core/stats.ts';
import type { ProcessFaultKind } from './fault-plan.ts';

export interface ObservedEvent {
  readonly replica: string;
  readonly offsetMs: number;
  readonly event: LifecycleEvent;
}

export interface ObservedRenewal {
  readonly replica: string;
  readonly offsetMs: number;
  readonly executionKey: string;
  readonly fence: number;
  /** By the replica's own (skewed) clock. */
  readonly at: number;
}

export interface InjectedProcessFault {
  readonly kind: ProcessFaultKind;
  readonly replica: string;
  /** Real time. */
  readonly at: number;
  /** Real time a paused process was resumed. */
  readonly until?: number;
}

export interface Effect {
  readonly executionKey: string;
  readonly fence: number;
  readonly worker: string;
}

export interface HistoryInput {
  readonly events: readonly ObservedEvent[];
  readonly renewals: readonly ObservedRenewal[];
  readonly processFaults: readonly InjectedProcessFault[];
  readonly slices: readonly Slice[];
  readonly ledger: readonly LedgerRecord[];
  readonly effects: readonly Effect[];
  /** Expected execution keys, expanded independently from each job's cron over the drill window. */
  readonly expected: readonly string[];
}

export interface Failover {
  readonly executionKey: string;
  readonly victim: string;
  readonly standby: string;
  readonly fault: ProcessFaultKind;
  /** Real time of the victim's last successful renewal (or its claim). */
  readonly lastHeartbeatAt: number;
  readonly takeoverAt: number;
  readonly latencyMs: number;
}

export interface Overlap {
  readonly executionKey: string;
  readonly zombie: string;
  readonly zombieFence: number;
  readonly standby: string;
  readonly from: number;
  readonly to: number;
}

export interface HistoryVerdict {
  readonly duplicates: string[];
  readonly missed: string[];
  readonly overlaps: Overlap[];
  readonly zombieCommitsRejected: number;
  /** Commits that landed for a fence older than the slice's last claim. Must be empty. */
  readonly zombieCommitsAccepted: string[];
  readonly fenceViolations: string[];
  readonly failovers: Failover[];
  readonly failover: Distribution;
  readonly startLag: Distribution;
  readonly finalStates: Record<string, number>;
}

const realTime = (observed: { offsetMs: number }, clockMs: number): number => clockMs - observed.offsetMs;
const eventTime = (observed: ObservedEvent): number => realTime(observed, Date.parse(observed.event.at));

export function checkHistory(input: HistoryInput): HistoryVerdict {
  const byKey = groupBy(input.events, (observed) => observed.event.executionKey);
  const claimsOf = (key: string): ObservedEvent[] =>
    (byKey.get(key) ?? []).filter((observed) => observed.event.type === 'claimed').sort((a, b) => eventTime(a) - eventTime(b));
  const sliceByKey = new Map(input.slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice]));
  const ledgerByKey = new Map(input.ledger.map((record) => [record.executionKey, record]));

  const effectsByKey = groupBy(input.effects, (effect) => effect.executionKey);
  const duplicates = [...effectsByKey].filter(([, effects]) => effects.length > 1).map(([key]) => key);

  const missed = input.expected.filter((key) => {
    const status = sliceByKey.get(key)?.status;
    return status !== 'SUCCEEDED' && status !== 'DEAD' && status !== 'SKIPPED';
  });

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

  const overlaps = findOverlaps(byKey, claimsOf);
  const failovers = findFailovers(input, claimsOf, byKey);
  const startLags = input.events
    .filter((observed) => observed.event.type === 'started')
    .map((observed) => eventTime(observed) - Date.parse(observed.event.scheduledAt));
  const finalStates: Record<string, number> = {};
  for (const slice of input.slices) finalStates[slice.status] = (finalStates[slice.status] ?? 0) + 1;

  return {
    duplicates,
    missed,
    overlaps,
    zombieCommitsRejected: input.events.filter((observed) => observed.event.type === 'fenced_out').length,
    zombieCommitsAccepted,
    fenceViolations,
    failovers,
    failover: distribution(failovers.map((failover) => failover.latencyMs)),
    startLag: distribution(startLags),
    finalStates,
  };
}

/** A zombie: a worker that had started its handler, then kept running past a standby's claim. */
function findOverlaps(byKey: Map<string, ObservedEvent[]>, claimsOf: (key: string) => ObservedEvent[]): Overlap[] {
  const overlaps: Overlap[] = [];
  for (const [key, events] of byKey) {
    const claims = claimsOf(key);
    for (let i = 1; i < claims.length; i++) {
      const previous = claims[i - 1] as ObservedEvent;
      const standby = claims[i] as ObservedEvent;
      const zombieEnd = events.find(
        (observed) =>
          observed.replica === previous.replica &&
          observed.event.fence === previous.event.fence &&
          ['committed', 'fenced_out', 'failed', 'dead'].includes(observed.event.type),
      );
      const started = events.some((observed) => observed.replica === previous.replica && observed.event.fence === previous.event.fence && observed.event.type === 'started');
      if (started && zombieEnd && eventTime(zombieEnd) > eventTime(standby)) {
        overlaps.push({
          executionKey: key,
          zombie: previous.replica,
          zombieFence: previous.event.fence,
          standby: standby.replica,
          from: eventTime(standby),
          to: eventTime(zombieEnd),
        });
      }
    }
  }
  return overlaps;
}

function findFailovers(input: HistoryInput, claimsOf: (key: string) => ObservedEvent[], byKey: Map<string, ObservedEvent[]>): Failover[] {
  const failovers: Failover[] = [];
  for (const fault of input.processFaults) {
    if (fault.kind === 'scannerKill') continue;
    for (const [key, events] of byKey) {
      // The victim's latest claim before the fault: a worker whose own heartbeats lapsed may have re-claimed its slice.
      const claim = claimsOf(key)
        .filter((observed) => observed.replica === fault.replica && eventTime(observed) <= fault.at)
        .at(-1);
      if (!claim) continue;
      const endedBefore = events.some(
        (observed) =>
          observed.replica === fault.replica &&
          observed.event.fence === claim.event.fence &&
          observed.event.type !== 'claimed' &&
          observed.event.type !== 'started' &&
          eventTime(observed) <= fault.at,
      );
      if (endedBefore) continue;
      const takeover = claimsOf(key).find((observed) => observed.event.fence > claim.event.fence && observed.replica !== fault.replica);
      if (!takeover) continue;
      const renewals = input.renewals
        .filter((renewal) => renewal.replica === fault.replica && renewal.executionKey === key && renewal.fence === claim.event.fence)
        .map((renewal) => realTime(renewal, renewal.at))
        .filter((at) => at <= fault.at);
      const lastHeartbeatAt = Math.max(eventTime(claim), ...renewals);
      failovers.push({
        executionKey: key,
        victim: fault.replica,
        standby: takeover.replica,
        fault: fault.kind,
        lastHeartbeatAt,
        takeoverAt: eventTime(takeover),
        latencyMs: eventTime(takeover) - lastHeartbeatAt,
      });
    }
  }
  return failovers;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
