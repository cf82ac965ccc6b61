/**
 * One seed of the simulation: the drill's jobs and faults against the real
 * engine in virtual time, then the drill's checker on what the stores hold.
 * Everything random is drawn from the seed, and nothing reads the host's
 * clock, so a seed replays its history exactly.
 */
import { executionKey } from '../../lib/core/execution-key.ts';
import { jitterOffsetMs } from '../../lib/core/jitter.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import { ledgerOfSlices } from '../../lib/core/ledger.ts';
import { toSlice } from '../../lib/memory/memory-tables.ts';
import { createMemoryInstallation } from '../../lib/memory/index.ts';
import { chaosJobs, DST_ZONE, isFastSchedule } from '../chaos/chaos-jobs.ts';
import { DST_TRANSITIONS, type DstMode } from '../chaos/dst.ts';
import { cronParserOccurrences, expectedOccurrences, scheduleMathOccurrences } from '../chaos/expected.ts';
import { planFaults, planLifecycle, type PlannedFault } from '../chaos/fault-plan.ts';
import { checkHistory, type HistoryVerdict, type InjectedClientFault, type InjectedProcessFault } from '../chaos/history.ts';
import { eventTime, type ObservedChunk } from '../chaos/observed.ts';
import { JobHistoryBook } from '../chaos/job-history.ts';
import { LifecycleInjector } from '../chaos/lifecycle-faults.ts';
import { SeededRandom } from '../chaos/random.ts';
import { InputFaults, type InputFaultsVerdict } from './input-faults.ts';
import { MidBatchFaults } from '../chaos/mid-batch-faults.ts';
import { SETTLEMENT_JOB_ID } from '../chaos/settlement-drill.ts';
import {
  checkSimSettlement,
  settlementSpec,
  settlementSummaries,
  SimBank,
  SIM_PAYOUTS_TABLE,
  SIM_SETTLEMENT_CHUNKS,
} from './sim-settlement.ts';
import type { SettlementVerdict } from '../chaos/settlement-checks.ts';
import type { ProcessRole } from './sim-process.ts';
import { SIM_SETTINGS, startReplica, type FleetContext, type SimObservations, type SimReplica } from './sim-fleet.ts';
import { SIM_EFFECTS_TABLE } from './sim-handlers.ts';
import { PROFILES, SimNetwork, type ProfileName } from './sim-network.ts';
import { VirtualClock } from './virtual-clock.ts';

export interface SeedOptions {
  readonly seed: number;
  readonly minutes: number;
  readonly profile: ProfileName;
  /** @default 40 */
  readonly jobs?: number;
  /** @default 2 */
  readonly scanners?: number;
  /** @default 3 */
  readonly workers?: number;
  /** @default 2 */
  readonly shards?: number;
  /** Poisoned job rows and forged work messages, inputs from outside the engine (input-faults.ts). @default true */
  readonly inputFaults?: boolean;
  /** The settlement job, paying through the outbox, and two outbox dispatchers (sim-settlement.ts). @default true */
  readonly settlement?: boolean;
  /** The window crosses this DST transition of America/New_York, with a share of the jobs in the hours it removes or repeats. */
  readonly dst?: DstMode;
}

export interface SeedResult {
  readonly seed: number;
  readonly profile: ProfileName;
  readonly simulatedMs: number;
  readonly verdict: HistoryVerdict;
  /** The poison and forgery checks, when input faults were on. */
  readonly inputs?: InputFaultsVerdict;
  /** The settlement checks, when the settlement ran; `violations` empty when they held. */
  readonly settlement?: { readonly verdict: SettlementVerdict; readonly violations: string[]; readonly dispatcherKills: number };
  readonly expected: number;
  /** Everything observed, for the seed's history file. */
  readonly history: SeedHistory;
}

export interface SeedHistory {
  readonly observed: SimObservations;
  readonly processFaults: InjectedProcessFault[];
  readonly clientFaults: InjectedClientFault[];
}

/** The drill jobs' lease (the default, 4 s). */
const LEASE_MS = 4000;
/** After the window: faults off, until every slice of the window has ended. */
const DRAIN_MS = 120_000;
/** Seeds start on different days and seconds, on days without a DST change unless `dst` asks for one. */
const FIRST_START = Date.UTC(2026, 4, 4, 0, 0, 0);
/** Where in the window a DST transition falls: time before it for the jobs to settle, and after it for the gap or repeat to play out. */
const DST_AT_FRACTION = 0.4;
const QUEUE_FAULTS = { duplicate: 0.02, lateDuplicate: 0.01, loss: 0.003 } as const;
/** Longer than any timer the engine sets in a simulated fleet (the jobs' 20 s timeout, a 16 s retry, a 15 min delay). */
const RETIRE_MS = 3_600_000;
/** A killed replica's replacement starts this long after (a new Lambda instance, a restarted process). */
const RESTART_MS = 500;
/** Outbox dispatchers, and how often one of them is killed (a dispatcher Lambda's instance lost mid-delivery). */
const DISPATCHERS = 2;
const DISPATCHER_KILL_EVERY_MS = [45_000, 120_000] as const;

export async function simulateSeed(options: SeedOptions): Promise<SeedResult> {
  const { seed } = options;
  const durationMs = options.minutes * 60_000;
  const startedAt = options.dst
    ? DST_TRANSITIONS[options.dst].at - Math.round(durationMs * DST_AT_FRACTION) - (seed % 60) * 1000
    : FIRST_START + (seed % 97) * 86_400_000 + ((seed * 7919) % 86_400) * 1000;
  // What a local time that does not exist or occurs twice means is lib/core/schedule.ts's policy, not cron-parser's.
  const enumerate = options.dst ? scheduleMathOccurrences : cronParserOccurrences;
  const time = new VirtualClock(startedAt);
  const shards = options.shards ?? 2;
  const install = createMemoryInstallation({
    clock: time,
    shardCount: shards,
    sweepGraceMs: SIM_SETTINGS.sweepGraceMs,
    businessTables: { [SIM_EFFECTS_TABLE]: ['effectId'], [SIM_PAYOUTS_TABLE]: ['payoutId'] },
  });
  const observed: SimObservations = { events: [], renewals: [], receives: [], sends: [], chunks: [], errors: [] };
  const processFaults: InjectedProcessFault[] = [];
  const clientFaults: InjectedClientFault[] = [];
  const network = new SimNetwork(time, PROFILES[options.profile], new SeededRandom(seed * 31 + 7), (fault) => {
    // A lost reply is, to the caller, a request that hung until its timeout.
    clientFaults.push({
      kind: fault.kind === 'lostReply' ? 'hang' : fault.kind,
      replica: fault.process,
      at: fault.at,
      request: fault.request,
      ...(fault.executionKey && { executionKey: fault.executionKey }),
      ...(fault.jobIds && fault.jobIds.length > 0 && { jobIds: fault.jobIds }),
    });
  });
  const settles = options.settlement ?? true;
  const bank = settles ? new SimBank(seed) : undefined;
  // The first attempt at each settlement stopped after a few of its chunks, as the settlement drill does.
  const midBatch = new MidBatchFaults(new SeededRandom(seed * 31 + 12), ['kill', 'pause'], SIM_SETTLEMENT_CHUNKS);
  const onChunk = (chunk: ObservedChunk): void => {
    const kind = chunk.executionKey.startsWith(`${SETTLEMENT_JOB_ID}:`) ? midBatch.after(chunk) : undefined;
    if (kind !== undefined) fleet.stop(chunk.replica, kind, processFaults);
  };
  const context: FleetContext = { time, install, network, seed, observed, queueFaults: QUEUE_FAULTS, ...(bank && { bank, onChunk }) };
  const fleet = new Fleet(context);
  for (let i = 1; i <= (options.scanners ?? 2); i++) fleet.start('scanner', i);
  for (let i = 1; i <= (options.workers ?? 3); i++) fleet.start('worker', i);
  for (let i = 1; settles && i <= DISPATCHERS; i++) fleet.start('dispatcher', i);

  const specs = chaosJobs(options.jobs ?? 40, new SeededRandom(seed + 1), { dst: options.dst !== undefined });
  const repository = install.jobs();
  const book = new JobHistoryBook();
  for (const spec of specs) book.record('create', (await repository.put(spec)).job);
  // Beside the drill's jobs: no lifecycle change, poisoning or forgery names it (its checks expect every occurrence).
  if (settles) book.record('create', (await repository.put(settlementSpec())).job);

  const random = new SeededRandom(seed);
  const at = (ms: number, action: () => Promise<void> | void): void => {
    void time.sleep(startedAt + ms - time.now()).then(action);
  };
  // The tick: every shard's scan, each to one live scanner, as the scan queue would deliver it.
  let ticking = true;
  const ticks = async (): Promise<void> => {
    while (ticking) {
      for (let shard = 0; shard < shards; shard++) fleet.pick('scanner', random)?.scan?.(shard);
      await time.sleep(SIM_SETTINGS.tickMs);
    }
  };
  void ticks();

  for (const fault of planFaults({ seed, durationMs, faults: ['kill', 'pause', 'scannerKill'], leaseMs: LEASE_MS }))
    at(fault.atMs, () => fleet.inject(fault, random, processFaults));
  let dispatcherKills = 0;
  if (settles) {
    const kills = new SeededRandom(seed * 7 + 5);
    for (let ms = kills.int(...DISPATCHER_KILL_EVERY_MS); ms < durationMs; ms += kills.int(...DISPATCHER_KILL_EVERY_MS))
      at(ms, () => void (fleet.kill('dispatcher', kills) && dispatcherKills++));
  }
  // Clocks stepped back (an NTP correction), a few times a minute.
  for (let ms = 7000 + random.int(0, 20_000); ms < durationMs - 10_000; ms += random.int(10_000, 40_000))
    at(ms, () => fleet.pick('worker', random)?.process.step(-random.int(200, 1500)));

  const lifecycle = new LifecycleInjector(
    {
      repository,
      readRecord: async (jobId) => structuredClone(install.tables.jobs.get(jobId)),
      book,
      random: new SeededRandom(seed + 2),
      onError: (error, where) => observed.errors.push({ process: 'operator', context: where, message: String(error) }),
    },
    specs,
  );
  const inputs =
    (options.inputFaults ?? true)
      ? new InputFaults({
          seed,
          durationMs,
          shards,
          install,
          book,
          jobIds: specs.map((spec) => spec.id),
          // In the hour a fall-back repeats, a job of that zone runs nothing (lib/core/schedule.ts: `once`): no scan would meet its bad row.
          poisonable: specs.filter((spec) => options.dst === undefined || spec.timeZone !== DST_ZONE).map((spec) => spec.id),
          enumerate,
          now: () => time.now(),
          specOf: (jobId) => lifecycle.spec(jobId),
          onError: (error, where) => observed.errors.push({ process: 'operator', context: where, message: String(error) }),
        })
      : undefined;
  inputs?.plan(at);
  const preferred = specs.flatMap((spec, index) => (isFastSchedule(spec.schedule) ? [index] : []));
  for (const change of planLifecycle({ seed, durationMs, jobCount: specs.length, preferred })) {
    const jobId = (specs[change.job] as { id: string }).id;
    at(change.atMs, async () => void (inputs?.isPoisoned(jobId) || (await lifecycle.change(jobId, change.choice))));
  }

  await time.run(startedAt + durationMs);
  network.faultsOn = false;
  fleet.faultsOn = false;
  await time.run(startedAt + durationMs + DRAIN_MS);
  ticking = false;

  const slices = [...install.tables.slices.values()].map(toSlice);
  const expected = expectedOccurrences(book.histories(), startedAt, startedAt + durationMs, enumerate);
  const effects = [
    ...install.tables.businessItems(SIM_EFFECTS_TABLE).map((item) => ({
      executionKey: String(item.executionKey),
      fence: Number(item.fence),
      worker: String(item.worker),
    })),
    ...settlementSummaries(install),
  ];
  const history = checkHistory({
    events: observed.events,
    renewals: observed.renewals,
    processFaults,
    clientFaults,
    receives: observed.receives,
    slices,
    ledger: ledgerOfSlices(slices),
    effects,
    deadLetters: [
      ...install.deadLetters.records.map((record) => ({
        executionKey: executionKey(record.jobId, record.scheduledAt),
        kind: 'dead-slice',
      })),
    ],
    expected,
    startOffsetOf: new Map(
      specs.flatMap((spec) =>
        spec.jitter === undefined ? [] : [[spec.id, jitterOffsetMs(spec.id, parseJobSpec(spec).policies.jitterMs)] as const],
      ),
    ),
    catchUpBefore: startedAt,
  });
  const lastStartedAt = new Map<string, number>();
  for (const start of observed.events.filter((observed) => observed.event.type === 'started')) {
    const key = start.event.executionKey;
    lastStartedAt.set(key, Math.max(lastStartedAt.get(key) ?? -Infinity, eventTime(start)));
  }
  // An effect whose start was not seen: its run may have come at any time.
  for (const { executionKey: key } of effects) if (!lastStartedAt.has(key)) lastStartedAt.set(key, Infinity);
  const onRecord = new Set(slices.map((slice) => executionKey(slice.jobId, slice.scheduledAt)));
  const checked = inputs ? await inputs.check(history, expected, observed.events, lastStartedAt, onRecord) : { verdict: history };
  const settlement = bank
    ? {
        ...(await checkSimSettlement({
          install,
          bank,
          expected,
          slices,
          chunks: observed.chunks,
          failovers: history.failovers,
          processFaults,
        })),
        dispatcherKills,
      }
    : undefined;
  await fleet.retire(time);
  return {
    seed,
    profile: options.profile,
    simulatedMs: durationMs,
    verdict: checked.verdict,
    ...('inputs' in checked && { inputs: checked.inputs }),
    ...(settlement && { settlement }),
    expected: expected.length,
    history: { observed, processFaults, clientFaults },
  };
}

/** The replicas by role, with the drill's process faults: a kill takes a busy worker when there is one, and its replacement starts. */
class Fleet {
  faultsOn = true;
  private readonly replicas: SimReplica[] = [];
  private readonly generations = new Map<string, number>();

  constructor(private readonly context: FleetContext) {}

  start(role: ProcessRole, slot: number): SimReplica {
    const key = `${role}-${slot}`;
    const generation = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, generation);
    const replica = startReplica(this.context, role, `${key}.${generation}`);
    this.replicas.push(replica);
    return replica;
  }

  /**
   * Kills every process and lets every timer left fire: a wait's listener on a composite signal (AbortSignal.any)
   * whose sources never abort is held by Node for good, and with it the whole seed (1,000 seeds grew to 4 GB).
   */
  async retire(time: VirtualClock): Promise<void> {
    for (const replica of this.replicas) replica.process.kill();
    await time.run(time.now() + RETIRE_MS);
  }

  /** A live, running replica of `role`, drawn from `random`. */
  pick(role: ProcessRole, random: SeededRandom, busyFirst = false): SimReplica | undefined {
    const candidates = this.replicas.filter((replica) => replica.process.role === role && replica.process.alive && !replica.process.paused);
    if (candidates.length === 0) return undefined;
    const busy = busyFirst ? candidates.filter((replica) => replica.busy()) : [];
    return random.pick(busy.length > 0 ? busy : candidates);
  }

  /** Kills a live replica of `role` and starts its replacement. @returns whether there was one to kill. */
  kill(role: ProcessRole, random: SeededRandom): boolean {
    const victim = this.faultsOn ? this.pick(role, random) : undefined;
    if (victim === undefined) return false;
    victim.process.kill();
    this.restart(victim);
    return true;
  }

  private restart(victim: SimReplica): void {
    const slot = Number(/-(\d+)\./.exec(victim.process.id)?.[1] ?? 1);
    void this.context.time.sleep(RESTART_MS).then(() => this.start(victim.process.role, slot));
  }

  inject(fault: PlannedFault, random: SeededRandom, log: InjectedProcessFault[]): void {
    if (!this.faultsOn) return;
    const role = fault.kind === 'scannerKill' ? 'scanner' : 'worker';
    const victim = this.pick(role, random, role === 'worker');
    if (victim !== undefined) this.fault(victim, fault.kind, log, fault.pauseMs);
  }

  /** Kills or pauses the replica `id` when it is alive and running (a mid-batch fault). */
  stop(id: string, kind: 'kill' | 'pause', log: InjectedProcessFault[]): void {
    const victim = this.replicas.find((replica) => replica.process.id === id);
    if (this.faultsOn && victim?.process.alive && !victim.process.paused) this.fault(victim, kind, log);
  }

  private fault(victim: SimReplica, kind: PlannedFault['kind'], log: InjectedProcessFault[], pauseMs = LEASE_MS + 2000): void {
    const at = this.context.time.now();
    if (kind === 'pause') {
      victim.process.pause(pauseMs);
      log.push({ kind: 'pause', replica: victim.process.id, at, until: at + pauseMs });
      return;
    }
    victim.process.kill();
    log.push({ kind, replica: victim.process.id, at });
    this.restart(victim);
  }
}
