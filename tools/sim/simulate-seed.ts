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
import { chaosJobs, isFastSchedule } from '../chaos/chaos-jobs.ts';
import { cronParserOccurrences, expectedOccurrences } from '../chaos/expected.ts';
import { planFaults, planLifecycle, type PlannedFault } from '../chaos/fault-plan.ts';
import { checkHistory, type HistoryVerdict, type InjectedClientFault, type InjectedProcessFault } from '../chaos/history.ts';
import { JobHistoryBook } from '../chaos/job-history.ts';
import { LifecycleInjector } from '../chaos/lifecycle-faults.ts';
import { SeededRandom } from '../chaos/random.ts';
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
}

export interface SeedResult {
  readonly seed: number;
  readonly profile: ProfileName;
  readonly simulatedMs: number;
  readonly verdict: HistoryVerdict;
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
/** Seeds start on different days and seconds (never on a DST change: the drill's DST mode is not simulated yet). */
const FIRST_START = Date.UTC(2026, 4, 4, 0, 0, 0);
const QUEUE_FAULTS = { duplicate: 0.02, lateDuplicate: 0.01, loss: 0.003 } as const;
/** Longer than any timer the engine sets in a simulated fleet (the jobs' 20 s timeout, a 16 s retry, a 15 min delay). */
const RETIRE_MS = 3_600_000;
/** A killed replica's replacement starts this long after (a new Lambda instance, a restarted process). */
const RESTART_MS = 500;

export async function simulateSeed(options: SeedOptions): Promise<SeedResult> {
  const { seed } = options;
  const startedAt = FIRST_START + (seed % 97) * 86_400_000 + ((seed * 7919) % 86_400) * 1000;
  const durationMs = options.minutes * 60_000;
  const time = new VirtualClock(startedAt);
  const shards = options.shards ?? 2;
  const install = createMemoryInstallation({
    clock: time,
    shardCount: shards,
    sweepGraceMs: SIM_SETTINGS.sweepGraceMs,
    businessTables: { [SIM_EFFECTS_TABLE]: ['effectId'] },
  });
  const observed: SimObservations = { events: [], renewals: [], receives: [], sends: [], errors: [] };
  const processFaults: InjectedProcessFault[] = [];
  const clientFaults: InjectedClientFault[] = [];
  const network = new SimNetwork(time, PROFILES[options.profile], new SeededRandom(seed * 31 + 7), (fault) => {
    // A lost reply is, to the caller, a request that hung until its timeout.
    clientFaults.push({
      kind: fault.kind === 'throttle' ? 'throttle' : 'hang',
      replica: fault.process,
      at: fault.at,
      request: fault.request,
      ...(fault.executionKey && { executionKey: fault.executionKey }),
      ...(fault.jobIds && fault.jobIds.length > 0 && { jobIds: fault.jobIds }),
    });
  });
  const context: FleetContext = { time, install, network, seed, observed, queueFaults: QUEUE_FAULTS };
  const fleet = new Fleet(context);
  for (let i = 1; i <= (options.scanners ?? 2); i++) fleet.start('scanner', i);
  for (let i = 1; i <= (options.workers ?? 3); i++) fleet.start('worker', i);

  const specs = chaosJobs(options.jobs ?? 40, new SeededRandom(seed + 1));
  const repository = install.jobs();
  const book = new JobHistoryBook();
  for (const spec of specs) book.record('create', (await repository.put(spec)).job);

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
  const preferred = specs.flatMap((spec, index) => (isFastSchedule(spec.schedule) ? [index] : []));
  for (const change of planLifecycle({ seed, durationMs, jobCount: specs.length, preferred }))
    at(change.atMs, async () => void (await lifecycle.change((specs[change.job] as { id: string }).id, change.choice)));

  await time.run(startedAt + durationMs);
  network.faultsOn = false;
  fleet.faultsOn = false;
  await time.run(startedAt + durationMs + DRAIN_MS);
  ticking = false;

  const slices = [...install.tables.slices.values()].map(toSlice);
  const expected = expectedOccurrences(book.histories(), startedAt, startedAt + durationMs, cronParserOccurrences);
  const verdict = checkHistory({
    events: observed.events,
    renewals: observed.renewals,
    processFaults,
    clientFaults,
    receives: observed.receives,
    slices,
    ledger: ledgerOfSlices(slices),
    effects: install.tables.businessItems(SIM_EFFECTS_TABLE).map((item) => ({
      executionKey: String(item.executionKey),
      fence: Number(item.fence),
      worker: String(item.worker),
    })),
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
  await fleet.retire(time);
  return {
    seed,
    profile: options.profile,
    simulatedMs: durationMs,
    verdict,
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

  start(role: 'scanner' | 'worker', slot: number): SimReplica {
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
  pick(role: 'scanner' | 'worker', random: SeededRandom, busyFirst = false): SimReplica | undefined {
    const candidates = this.replicas.filter((replica) => replica.process.role === role && replica.process.alive && !replica.process.paused);
    if (candidates.length === 0) return undefined;
    const busy = busyFirst ? candidates.filter((replica) => replica.busy()) : [];
    return random.pick(busy.length > 0 ? busy : candidates);
  }

  inject(fault: PlannedFault, random: SeededRandom, log: InjectedProcessFault[]): void {
    if (!this.faultsOn) return;
    const role = fault.kind === 'scannerKill' ? 'scanner' : 'worker';
    const victim = this.pick(role, random, role === 'worker');
    if (victim === undefined) return;
    const { time } = this.context;
    const at = time.now();
    if (fault.kind === 'pause') {
      const pauseMs = fault.pauseMs ?? LEASE_MS + 2000;
      victim.process.pause(pauseMs);
      log.push({ kind: 'pause', replica: victim.process.id, at, until: at + pauseMs });
      return;
    }
    victim.process.kill();
    log.push({ kind: fault.kind, replica: victim.process.id, at });
    const slot = Number(/-(\d+)\./.exec(victim.process.id)?.[1] ?? 1);
    void time.sleep(RESTART_MS).then(() => this.start(role, slot));
  }
}
