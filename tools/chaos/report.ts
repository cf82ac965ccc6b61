/**
 * The drill's report (report.json, documented in docs/chaos.md) and the
 * verdict: which invariants the history broke.
 */
import type { Distribution } from '../../lib/core/stats.ts';
import type { FaultKind } from './config.ts';
import type { HistoryVerdict } from './history.ts';
import { poisonViolations, type PoisonVerdict } from './poison-checks.ts';
import type { Poisoning } from './poison-faults.ts';
import type { SettlementReport } from './settlement-report.ts';

export const FAILOVER_GOAL_MS = 5000;

export interface ReportSettings {
  readonly scanners: number;
  readonly workers: number;
  readonly jobs: number;
  readonly durationSeconds: number;
  readonly faults: readonly FaultKind[];
  /** Probabilities of the per-message, per-call and per-try faults (those on). */
  readonly rates?: Readonly<Record<string, number>>;
  /** DST mode: the transition the window crosses and every process's clock offset to get there. */
  readonly dst?: { readonly mode: string; readonly transition: string; readonly clockOffsetMs: number };
}

export interface ChaosReport {
  readonly seed: number;
  /** The drill installation's CRONFENCE_PREFIX: `cronfence verify` can audit it while its emulator runs. */
  readonly prefix: string;
  readonly settings: ReportSettings;
  readonly window: { startedAt: string; endedAt: string; drainedAt: string };
  readonly expectedOccurrences: number;
  readonly finalStates: Record<string, number>;
  readonly duplicates: number;
  readonly missed: number;
  readonly zombieCommitsRejected: number;
  readonly zombieCommitsAccepted: number;
  readonly overlaps: number;
  readonly fenceViolations: number;
  /** Takeovers of a holder that was still renewing. */
  readonly healthyHoldersDisplaced: number;
  /** Execution keys both committed and DEAD or dead-lettered. */
  readonly committedThenDead: number;
  /** SUCCEEDED without the handler's business write (or without its ledger record). */
  readonly succeededWithoutWrites: number;
  /** Expected occurrences that ended SKIPPED because a lifecycle change came while they were pending. */
  readonly skippedByChange: number;
  /** Expected occurrences SKIPPED by their job's misfire policy (not missed). */
  readonly skippedByPolicy: number;
  /** The schedule-policy jobs (misfire after an outage, one-time) that did not end as their policy says (policy-checks.ts). */
  readonly policyViolations: string[];
  /** Failovers whose path met no injected AWS fault; the 5 s bound applies to these. */
  readonly failover: { p50Ms: number; p99Ms: number; maxMs: number; count: number };
  /** Failovers slowed by a throttled or hung request on their path (reported, not bounded). */
  readonly failoverSlowedByAws: { p50Ms: number; maxMs: number; count: number };
  /** Failovers of a claim that came back after its holder's own pause: the fast takeover disarmed by design (reported, not bounded). */
  readonly failoverAfterPausedClaim: { p50Ms: number; maxMs: number; count: number };
  /** Failovers whose message another worker received, then was killed or paused holding: a second fault on the path (reported, not bounded). */
  readonly failoverAfterHolderOfMessageStopped: { p50Ms: number; maxMs: number; count: number };
  /** Failovers that waited for a free poller of the one worker left, every other killed or paused: a second fault on the path (reported, not bounded). */
  readonly failoverAfterOthersStopped: { p50Ms: number; maxMs: number; count: number };
  /** Claims that returned after their message surfaced again and stood down unstarted: a standby claimed first. */
  readonly overtakenClaims: number;
  readonly startLag: { p50Ms: number; p99Ms: number; maxMs: number };
  readonly faults: Record<FaultKind, number>;
  /** AWS requests of the replicas that stopped cleanly (a killed replica reports none), by service.Operation. */
  readonly requests: Record<string, number>;
  /** `--settlement`: each settlement occurrence's payouts, wires and chunks, and its takeovers (settlement-checks.ts). */
  readonly settlement?: SettlementReport;
  /** The `poison` fault: bad rows written under jobs mid-drill, each set aside and repaired (poison-checks.ts). */
  readonly poison?: PoisonReport;
  /** The invariants this run broke; empty when it passed. */
  readonly violations: string[];
  readonly examples: {
    duplicates: string[];
    missed: string[];
    zombieCommitsAccepted: string[];
    fenceViolations: string[];
    healthyHoldersDisplaced: { executionKey: string; holder: string; holderFence: number; standby: string; silenceMs: number }[];
    committedThenDead: string[];
    succeededWithoutWrites: string[];
    /** `receivedMs`: the standby's receive of the message it claimed with, after the victim's last heartbeat. */
    slowestFailovers: {
      executionKey: string;
      victim: string;
      standby: string;
      fault: string;
      latencyMs: number;
      receivedMs?: number;
      slowedBy?: string;
      claimAfterPause?: true;
      messageHeldBy?: string;
      othersStopped?: true;
      disarmed?: true;
    }[];
  };
}

export interface PoisonReport {
  readonly poisonedJobs: number;
  /** Poisoned jobs a scan set aside in their poisoned generation: must be all of them. */
  readonly poisonedSetAside: number;
  readonly repaired: number;
  /** Missed occurrences of a poisoned job due just before its poisoning: the job's own fault, not counted in `missed`. */
  readonly excused: number;
  /** The first ten excused execution keys. */
  readonly excusedKeys: string[];
  readonly neverSetAside: string[];
  readonly setAsideAfterRepair: string[];
  readonly unrepaired: string[];
  /** Each poisoning: job, what was bad, its generation, drill times (ISO) of the poisoning and the repair. */
  readonly poisonings: { jobId: string; kind: string; generation: number; at: string; repairedAt?: string; repairedGeneration?: number }[];
}

export function poisonReport(verdict: PoisonVerdict, poisonings: readonly Poisoning[]): PoisonReport {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    poisonedJobs: verdict.poisonedJobs,
    poisonedSetAside: verdict.poisonedSetAside,
    repaired: verdict.repaired,
    excused: verdict.excused.length,
    excusedKeys: verdict.excused.slice(0, 10),
    neverSetAside: verdict.neverSetAside,
    setAsideAfterRepair: verdict.setAsideAfterRepair,
    unrepaired: verdict.unrepaired,
    poisonings: poisonings.map((p) => ({
      jobId: p.jobId,
      kind: p.kind,
      generation: p.generation,
      at: iso(p.at),
      ...(p.repairedAt !== undefined && { repairedAt: iso(p.repairedAt), repairedGeneration: p.repairedGeneration }),
    })),
  };
}

export interface ReportInput {
  readonly prefix: string;
  readonly options: { seed: number } & Omit<ReportSettings, 'dst' | 'rates'>;
  readonly rates?: ReportSettings['rates'];
  readonly dst?: ReportSettings['dst'];
  readonly verdict: HistoryVerdict;
  /** policy-checks.ts's findings. @default [] */
  readonly policyViolations?: readonly string[];
  readonly faults: Record<FaultKind, number>;
  readonly expected: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly drainedAt: number;
  readonly requests: Record<string, number>;
  readonly settlement?: SettlementReport;
  readonly poison?: { readonly verdict: PoisonVerdict; readonly poisonings: readonly Poisoning[] };
}

export function buildReport(input: ReportInput): ChaosReport {
  const { verdict, options } = input;
  const round = (n: number): number => (Number.isNaN(n) ? 0 : Math.round(n));
  const reportedApart = (latencies: Distribution): { p50Ms: number; maxMs: number; count: number } => ({
    p50Ms: round(latencies.p50),
    maxMs: round(latencies.max),
    count: latencies.count,
  });
  const report: Omit<ChaosReport, 'violations'> = {
    seed: options.seed,
    prefix: input.prefix,
    settings: {
      scanners: options.scanners,
      workers: options.workers,
      jobs: options.jobs,
      durationSeconds: options.durationSeconds,
      faults: options.faults,
      ...(input.rates ? { rates: input.rates } : {}),
      ...(input.dst ? { dst: input.dst } : {}),
    },
    window: {
      startedAt: new Date(input.startedAt).toISOString(),
      endedAt: new Date(input.endedAt).toISOString(),
      drainedAt: new Date(input.drainedAt).toISOString(),
    },
    expectedOccurrences: input.expected,
    finalStates: verdict.finalStates,
    duplicates: verdict.duplicates.length,
    missed: verdict.missed.length,
    zombieCommitsRejected: verdict.zombieCommitsRejected,
    zombieCommitsAccepted: verdict.zombieCommitsAccepted.length,
    overlaps: verdict.overlaps.length,
    fenceViolations: verdict.fenceViolations.length,
    healthyHoldersDisplaced: verdict.healthyHoldersDisplaced.length,
    committedThenDead: verdict.committedThenDead.length,
    succeededWithoutWrites: verdict.succeededWithoutWrites.length,
    skippedByChange: verdict.skippedByChange,
    skippedByPolicy: verdict.skippedByPolicy,
    policyViolations: [...(input.policyViolations ?? [])],
    failover: {
      p50Ms: round(verdict.failover.p50),
      p99Ms: round(verdict.failover.p99),
      maxMs: round(verdict.failover.max),
      count: verdict.failover.count,
    },
    failoverSlowedByAws: reportedApart(verdict.failoverSlowedByAws),
    failoverAfterPausedClaim: reportedApart(verdict.failoverAfterPausedClaim),
    failoverAfterHolderOfMessageStopped: reportedApart(verdict.failoverAfterHolderOfMessageStopped),
    failoverAfterOthersStopped: reportedApart(verdict.failoverAfterOthersStopped),
    overtakenClaims: verdict.overtakenClaims,
    startLag: { p50Ms: round(verdict.startLag.p50), p99Ms: round(verdict.startLag.p99), maxMs: round(verdict.startLag.max) },
    faults: input.faults,
    requests: input.requests,
    ...(input.settlement ? { settlement: input.settlement } : {}),
    ...(input.poison ? { poison: poisonReport(input.poison.verdict, input.poison.poisonings) } : {}),
    examples: {
      duplicates: verdict.duplicates.slice(0, 10),
      missed: verdict.missed.slice(0, 10),
      zombieCommitsAccepted: verdict.zombieCommitsAccepted.slice(0, 10),
      fenceViolations: verdict.fenceViolations.slice(0, 10),
      healthyHoldersDisplaced: verdict.healthyHoldersDisplaced
        .slice(0, 10)
        .map(({ executionKey, holder, holderFence, standby, silenceMs }) => ({
          executionKey,
          holder,
          holderFence,
          standby,
          silenceMs: Math.round(silenceMs),
        })),
      committedThenDead: verdict.committedThenDead.slice(0, 10),
      succeededWithoutWrites: verdict.succeededWithoutWrites.slice(0, 10),
      slowestFailovers: [...verdict.failovers]
        .sort((a, b) => b.latencyMs - a.latencyMs)
        .slice(0, 5)
        .map(
          ({
            executionKey,
            victim,
            standby,
            fault,
            latencyMs,
            lastHeartbeatAt,
            receivedAt,
            slowedBy,
            claimAfterPause,
            messageHeldBy,
            othersStopped,
            disarmed,
          }) => ({
            executionKey,
            victim,
            standby,
            fault,
            latencyMs: Math.round(latencyMs),
            ...(receivedAt !== undefined ? { receivedMs: Math.round(receivedAt - lastHeartbeatAt) } : {}),
            ...(slowedBy ? { slowedBy } : {}),
            ...(claimAfterPause ? { claimAfterPause } : {}),
            ...(messageHeldBy !== undefined ? { messageHeldBy } : {}),
            ...(othersStopped ? { othersStopped } : {}),
            ...(disarmed ? { disarmed } : {}),
          }),
        ),
    },
  };
  return { ...report, violations: [...violations(report), ...(input.poison ? poisonViolations(input.poison.verdict) : [])] };
}

function violations(report: Omit<ChaosReport, 'violations'>): string[] {
  const broken: string[] = [];
  if (report.duplicates > 0) broken.push(`${report.duplicates} execution keys committed more than once`);
  if (report.missed > 0) broken.push(`${report.missed} expected occurrences never reached a final state`);
  if (report.zombieCommitsAccepted > 0)
    broken.push(`${report.zombieCommitsAccepted} commits landed for a fence older than the slice's last claim`);
  if (report.fenceViolations > 0) broken.push(`${report.fenceViolations} slices whose fence did not grow monotonically`);
  if (report.healthyHoldersDisplaced > 0)
    broken.push(`${report.healthyHoldersDisplaced} takeovers of a holder that was still renewing its lease`);
  if (report.committedThenDead > 0) broken.push(`${report.committedThenDead} execution keys both committed and DEAD or dead-lettered`);
  if (report.succeededWithoutWrites > 0)
    broken.push(`${report.succeededWithoutWrites} SUCCEEDED slices without their business write or ledger record`);
  for (const problem of report.policyViolations) broken.push(`schedule policy: ${problem}`);
  broken.push(...(report.settlement?.violations ?? []));
  if (report.failover.count > 0 && report.failover.maxMs >= FAILOVER_GOAL_MS)
    broken.push(`failover max ${report.failover.maxMs} ms is not under ${FAILOVER_GOAL_MS} ms`);
  return broken;
}
