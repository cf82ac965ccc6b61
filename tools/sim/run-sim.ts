/**
 * `npm run sim`: many seeds of the simulation, one after another in this
 * process, summed into one report. Each seed's verdict is the drill's
 * checker's; a failing seed gets its history file, a one-line replay command
 * and the trace of the first slice that broke.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { distribution } from '../../lib/core/stats.ts';
import { realTime } from '../chaos/observed.ts';
import { failoverClass, isBoundedFailover, type FailoverClass } from '../chaos/takeovers.ts';
import type { DstMode } from '../chaos/dst.ts';
import type { ProfileName } from './sim-network.ts';
import { simulateSeed, type SeedOptions, type SeedResult } from './simulate-seed.ts';

export interface SimOptions {
  readonly fromSeed: number;
  readonly toSeed: number;
  readonly minutes: number;
  readonly profiles: readonly ProfileName[];
  readonly out: string;
  /** Write every seed's history, not only the failing ones'. */
  readonly histories?: boolean;
  /** The fleet and the schedule set (simulate-seed.ts defaults: 40 jobs, 2 scanners, 3 workers). */
  readonly size?: Pick<SeedOptions, 'jobs' | 'scanners' | 'workers'>;
  /** Poisoned rows and forged messages. @default true */
  readonly inputFaults?: boolean;
  /** The settlement, its outbox and dispatchers. @default true */
  readonly settlement?: boolean;
  /** Every seed's window crosses this DST transition. */
  readonly dst?: DstMode;
  readonly onSeed?: (done: number, total: number, seed: SeedSummary) => void;
}

/** What a seed's checks counted, and the report sums over its seeds. */
export interface SimCounts {
  readonly duplicates: number;
  readonly missed: number;
  readonly displaced: number;
  readonly zombieCommitsAccepted: number;
  readonly fenceViolations: number;
  /** Poisoned jobs never set aside or set aside after their repair, forged messages run or left unrejected. */
  readonly inputViolations: number;
  readonly poisonings: number;
  readonly forgedMessages: number;
  /** Settlements short of one payout row and one wire per merchant, redone chunks, or not SUCCEEDED. */
  readonly settlementViolations: number;
  readonly settlements: number;
  readonly wiresAccepted: number;
  /** Settlements taken over mid-batch, their committed chunks skipped by the standby. */
  readonly settlementTakeovers: number;
}

const COUNTS: readonly (keyof SimCounts)[] = [
  'duplicates',
  'missed',
  'displaced',
  'zombieCommitsAccepted',
  'fenceViolations',
  'inputViolations',
  'poisonings',
  'forgedMessages',
  'settlementViolations',
  'settlements',
  'wiresAccepted',
  'settlementTakeovers',
];

export interface SeedSummary extends SimCounts {
  readonly seed: number;
  readonly profile: ProfileName;
  readonly expected: number;
  readonly committedThenDead: number;
  readonly boundedFailovers: number;
  readonly failoverMaxMs: number | null;
  readonly processFaults: number;
  /** Requests throttled, hung or with their reply lost. */
  readonly requestFaults: number;
  /** Requests with a leg in the profile's latency tail (tools/sim/sim-network.ts, `SLOW_LEG_MS`). */
  readonly slowRequests: number;
  /** sha256 of the seed's history (the same seed gives the same digest). */
  readonly historyDigest: string;
  readonly historyFile?: string;
  readonly failing: boolean;
}

export interface SimReport extends SimCounts {
  readonly seeds: { readonly from: number; readonly to: number; readonly count: number };
  readonly profiles: readonly ProfileName[];
  readonly simulatedMinutes: number;
  readonly wallSeconds: number;
  readonly simulatedSecondsPerWallSecond: number;
  readonly expectedOccurrences: number;
  readonly dst?: DstMode;
  readonly failover: {
    readonly count: number;
    readonly p50Ms: number | null;
    readonly p99Ms: number | null;
    readonly maxMs: number | null;
  };
  /** Every failover of a killed or paused holder, bounded or not: what a user would see under the profile's faults. */
  readonly failoverAll: {
    readonly count: number;
    readonly p50Ms: number | null;
    readonly p99Ms: number | null;
    readonly maxMs: number | null;
  };
  /** Failovers reported apart from the bound, by the reason the checker gives (tools/chaos/takeovers.ts). */
  readonly failoverApart: Record<Exclude<FailoverClass, 'bounded'>, { readonly count: number; readonly maxMs: number | null }>;
  readonly failingSeeds: { readonly seed: number; readonly profile: ProfileName; readonly replay: string; readonly trace: string[] }[];
  readonly perSeed: SeedSummary[];
}

export async function runSimulation(options: SimOptions): Promise<SimReport> {
  await mkdir(options.out, { recursive: true });
  const started = process.hrtime.bigint();
  const perSeed: SeedSummary[] = [];
  const failovers: number[] = [];
  const apart: Record<Exclude<FailoverClass, 'bounded'>, number[]> = {
    slowedByAws: [],
    afterPausedClaim: [],
    afterHolderOfMessageStopped: [],
    afterOthersStopped: [],
  };
  const failingSeeds: SimReport['failingSeeds'][number][] = [];
  const total = (options.toSeed - options.fromSeed + 1) * options.profiles.length;
  let done = 0;
  for (const profile of options.profiles) {
    for (let seed = options.fromSeed; seed <= options.toSeed; seed++) {
      const result = await simulateSeed({
        seed,
        minutes: options.minutes,
        profile,
        ...options.size,
        inputFaults: options.inputFaults ?? true,
        settlement: options.settlement ?? true,
        ...(options.dst && { dst: options.dst }),
      });
      const { verdict, inputs, settlement } = result;
      const history = historyText(result);
      const failing =
        verdict.duplicates.length +
          verdict.missed.length +
          verdict.healthyHoldersDisplaced.length +
          verdict.zombieCommitsAccepted.length +
          verdict.fenceViolations.length +
          verdict.committedThenDead.length +
          (inputs?.violations.length ?? 0) +
          (settlement?.violations.length ?? 0) >
          0 || verdict.failover.max >= 5000;
      const historyFile = failing || options.histories ? path.join(options.out, `history-${profile}-${seed}.json`) : undefined;
      if (historyFile) await writeFile(historyFile, history);
      for (const failover of verdict.failovers) {
        const kind = failoverClass(failover);
        (kind === 'bounded' ? failovers : apart[kind]).push(failover.latencyMs);
      }
      const summary: SeedSummary = {
        seed,
        profile,
        expected: result.expected,
        duplicates: verdict.duplicates.length,
        missed: verdict.missed.length,
        displaced: verdict.healthyHoldersDisplaced.length,
        zombieCommitsAccepted: verdict.zombieCommitsAccepted.length,
        fenceViolations: verdict.fenceViolations.length,
        committedThenDead: verdict.committedThenDead.length,
        inputViolations: inputs?.violations.length ?? 0,
        poisonings: inputs?.poison.poisonedJobs ?? 0,
        forgedMessages: inputs?.forgeries.forged ?? 0,
        settlementViolations: settlement?.violations.length ?? 0,
        settlements: settlement?.verdict.occurrences.length ?? 0,
        wiresAccepted: settlement?.verdict.totals.acceptedWires ?? 0,
        settlementTakeovers: settlement?.verdict.totals.takeovers ?? 0,
        boundedFailovers: verdict.failover.count,
        failoverMaxMs: verdict.failover.count > 0 ? verdict.failover.max : null,
        processFaults: result.history.processFaults.length,
        requestFaults: result.history.clientFaults.filter((fault) => fault.kind !== 'slow').length,
        slowRequests: result.history.clientFaults.filter((fault) => fault.kind === 'slow').length,
        historyDigest: createHash('sha256').update(history).digest('hex'),
        ...(historyFile && { historyFile }),
        failing,
      };
      perSeed.push(summary);
      if (failing)
        failingSeeds.push({
          seed,
          profile,
          replay: replayCommand(seed, options.minutes, profile, options),
          trace: traceOfFirstBreak(result),
        });
      options.onSeed?.(++done, total, summary);
    }
  }
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const simulatedMinutes = options.minutes * total;
  const sum = (pick: (seed: SeedSummary) => number): number => perSeed.reduce((acc, seed) => acc + pick(seed), 0);
  const bounded = distribution(failovers);
  const all = distribution([...failovers, ...Object.values(apart).flat()]);
  const report: SimReport = {
    seeds: { from: options.fromSeed, to: options.toSeed, count: options.toSeed - options.fromSeed + 1 },
    profiles: options.profiles,
    simulatedMinutes,
    wallSeconds: round(wallSeconds),
    simulatedSecondsPerWallSecond: round((simulatedMinutes * 60) / wallSeconds),
    expectedOccurrences: sum((seed) => seed.expected),
    ...(Object.fromEntries(COUNTS.map((count) => [count, sum((seed) => seed[count])])) as Record<keyof SimCounts, number>),
    ...(options.dst && { dst: options.dst }),
    failover: {
      count: bounded.count,
      p50Ms: bounded.count > 0 ? bounded.p50 : null,
      p99Ms: bounded.count > 0 ? bounded.p99 : null,
      maxMs: bounded.count > 0 ? bounded.max : null,
    },
    failoverAll: {
      count: all.count,
      p50Ms: all.count > 0 ? all.p50 : null,
      p99Ms: all.count > 0 ? all.p99 : null,
      maxMs: all.count > 0 ? all.max : null,
    },
    failoverApart: Object.fromEntries(
      Object.entries(apart).map(([kind, latencies]) => [
        kind,
        { count: latencies.length, maxMs: latencies.length > 0 ? latencies.reduce((a, b) => Math.max(a, b)) : null },
      ]),
    ) as SimReport['failoverApart'],
    failingSeeds,
    perSeed,
  };
  await writeFile(path.join(options.out, 'sim-report.json'), `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

export function replayCommand(
  seed: number,
  minutes: number,
  profile: ProfileName,
  options: Pick<SimOptions, 'size' | 'inputFaults' | 'settlement' | 'dst'> = {},
): string {
  const flags = Object.entries(options.size ?? {}).map(([name, value]) => ` --${name} ${value}`);
  if (options.dst) flags.push(` --dst ${options.dst}`);
  if (options.inputFaults === false) flags.push(' --no-input-faults');
  if (options.settlement === false) flags.push(' --no-settlement');
  return `npm run sim -- --seeds ${seed}-${seed} --minutes ${minutes} --profile ${profile}${flags.join('')} --histories`;
}

/** The history as one JSON text: what the seed's processes did and reported, in order; the claim tokens (random UUIDs the store draws) left out. */
export function historyText(result: SeedResult): string {
  const { observed, processFaults, clientFaults } = result.history;
  return `${JSON.stringify({ seed: result.seed, profile: result.profile, simulatedMs: result.simulatedMs, processFaults, clientFaults, ...observed }, null, 1)}\n`;
}

/** What happened to the first slice that broke an invariant (or the slowest failover), one line each, on true time. */
function traceOfFirstBreak(result: SeedResult): string[] {
  const { verdict } = result;
  const inputViolations = [...(result.inputs?.violations ?? []), ...(result.settlement?.violations ?? [])];
  const slowest = [...verdict.failovers].filter(isBoundedFailover).sort((a, b) => b.latencyMs - a.latencyMs)[0];
  const key =
    verdict.duplicates[0] ??
    verdict.zombieCommitsAccepted[0] ??
    verdict.fenceViolations[0] ??
    verdict.healthyHoldersDisplaced[0]?.executionKey ??
    verdict.committedThenDead[0] ??
    verdict.missed[0] ??
    (inputViolations.length > 0 ? undefined : slowest?.executionKey);
  return [...inputViolations, ...(key === undefined ? [] : [`slice ${key}`, ...sliceTimeline(result, key)])];
}

/** Every observation about one slice, with the faults of the processes that touched it, ordered on true time. */
export function sliceTimeline(result: SeedResult, key: string): string[] {
  const { observed, processFaults, clientFaults } = result.history;
  const rows: [number, string, string][] = [];
  for (const { event, replica, offsetMs } of observed.events) {
    if (event.executionKey !== key) continue;
    const details = [event.takeover && 'takeover', event.claimMs !== undefined && `claim ${event.claimMs} ms`].filter(Boolean).join(', ');
    rows.push([
      realTime({ offsetMs }, Date.parse(event.at)),
      replica,
      `${event.type} fence ${event.fence}${details ? ` (${details})` : ''}`,
    ]);
  }
  for (const renewal of observed.renewals)
    if (renewal.executionKey === key)
      rows.push([
        realTime(renewal, renewal.at),
        renewal.replica,
        `renewed fence ${renewal.fence}${renewal.disarmed ? ', disarmed' : renewal.rearmed ? ', re-armed' : ''}`,
      ]);
  for (const receive of observed.receives)
    if (receive.executionKey === key)
      rows.push([receive.at, receive.replica, `received ${receive.messageId} (delivery ${receive.receiveCount})`]);
  for (const send of observed.sends)
    if (send.executionKey === key)
      rows.push([send.at, send.process, `sent, delay ${send.delaySeconds} s${send.fate === 'sent' ? '' : `, ${send.fate}`}`]);
  for (const fault of clientFaults) if (fault.executionKey === key) rows.push([fault.at, fault.replica, `${fault.kind}: ${fault.request}`]);
  const touched = new Set(rows.map(([, replica]) => replica));
  for (const fault of processFaults)
    if (touched.has(fault.replica))
      rows.push([
        fault.at,
        fault.replica,
        `${fault.kind}${fault.until === undefined ? '' : ` until ${new Date(fault.until).toISOString()}`}`,
      ]);
  const first = Math.min(...rows.filter(([, , what]) => !/^(kill|pause|scannerKill)/.test(what)).map(([at]) => at));
  return rows
    .filter(([at]) => at >= first - 10_000)
    .sort((a, b) => a[0] - b[0])
    .map(([at, replica, what]) => `${new Date(at).toISOString()} ${replica.padEnd(12)} ${what}`);
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
