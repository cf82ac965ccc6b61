/**
 * `npm run chaos`: the real scanners and workers as separate processes,
 * a seeded plan of faults (kills, pauses, scanner kills, duplicated, delayed,
 * late and dropped messages, clock skew, lost commit replies, slow handlers,
 * throttled and hung requests, lifecycle changes of jobs), optionally across
 * a DST transition, then a check of the recorded history against the
 * invariants.
 */
import { FleetMeters } from '../meter/replica-meter.ts';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createAwsClients, destroyAwsClients, type ClientPatience } from '../../lib/aws/clients.ts';
import { OffsetClock, sleepUntil, systemClock, type Clock } from '../../lib/core/clock.ts';
import { CronfenceError } from '../../lib/core/errors.ts';
import { jitterOffsetMs } from '../../lib/core/jitter.ts';
import { ledgerOfSlices } from '../../lib/core/ledger.ts';
import { parseJobSpec, type JobSpecInput } from '../../lib/core/job-spec.ts';
import { tick } from '../../lib/engine/ticker.ts';
import { ensureAwsEndpoint } from '../../lib/local/emulator.ts';
import { ReplicaFleet, type Replica, type ReplicaRole } from '../../lib/local/fleet.ts';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.ts';
import { packageFile } from '../../lib/package/package-files.ts';
import { chaosJobs } from './chaos-jobs.ts';
import { CHAOS_ENV, DEFAULT_FAULT_RATES, encodeChaosConfig, type FaultKind, type FaultRates, type ReplicaChaosConfig } from './config.ts';
import { DrillAbortedError } from './drill-aborted.ts';
import type { DrillProgress } from './drill-progress.ts';
import { drainWindow, prepareStores, readDeadLetters, readEffects, readJobRecord, readSlices, readWheel } from './drill-stores.ts';
import { DST_TRANSITIONS, dstClockOffsetMs, type DstMode } from './dst.ts';
import { cronParserOccurrences, expectedOccurrences, scheduleMathOccurrences, type Enumerate } from './expected.ts';
import { planFaults } from './fault-plan.ts';
import { checkHistory, type HistoryVerdict } from './history.ts';
import { JobHistoryBook } from './job-history.ts';
import { checkOverlapRuns, checkPolicies } from './policy-checks.ts';
import { OVERLAP_JOBS } from './policy-jobs.ts';
import { outageOccurrences, setUpPolicyJobs, type PolicySetup } from './policy-setup.ts';
import { changeJobs, readPoisonVerdict } from './job-changes.ts';
import { HistoryRecorder } from './recorder.ts';
import { buildReport, FAILOVER_GOAL_MS, type ChaosReport } from './report.ts';
import { checkSettlement, type SettlementStoreRecords } from './settlement-checks.ts';
import { settlementReport, type SettlementReport } from './settlement-report.ts';
import { SETTLEMENT_CHUNKS, SETTLEMENT_JOB_ID, SettlementDrill } from './settlement-drill.ts';
import { SETTLEMENT_MERCHANTS } from '../../examples/jobs/settlement.ts';
import { SeededRandom } from './random.ts';
import { renderTimelineSvg } from './timeline-svg.ts';
import { stopReplica } from './process-faults.ts';

export interface DrillOptions {
  readonly scanners: number;
  readonly workers: number;
  readonly jobs: number;
  readonly durationSeconds: number;
  readonly seed: number;
  readonly faults: readonly FaultKind[];
  /** Overrides of DEFAULT_FAULT_RATES (to measure how much of a fault the engine survives). */
  readonly rates?: Partial<FaultRates>;
  readonly outDir: string;
  /** Offset every clock so the window crosses this DST transition of America/New_York. */
  readonly dst?: DstMode;
  /**
   * The replica entry module to fork (the broken-engine test's own, which
   * runs chaosReplica with a store of its own). @default tools/chaos/chaos-replica-entry.ts
   */
  readonly replicaEntry?: string;
  /**
   * Adds the story's settlement (settlement-drill.ts): merchant-settlement-fast paying 1,200 merchants through the
   * outbox to a mock bank, its workers killed and paused mid-batch, its payouts, wires and chunks checked. @default false
   */
  readonly settlement?: boolean;
  readonly onProgress?: (progress: DrillProgress) => void;
}

/** The replica the drill forks, of this build (the source, or the compiled one). */
const CHAOS_REPLICA = packageFile('tools/chaos/chaos-replica-entry.ts');
const LEASE_MS = 4000;
const TICK_MS = 5000;
const DRAIN_TIMEOUT_MS = 90_000;
/** The drill's own clients: 10 s a try, 5 tries (the replicas keep the engine's 3 s x 3). */
const DRILL_CLIENT_PATIENCE: ClientPatience = { requestTimeoutMs: 10_000, maxAttempts: 5 };
/** After the drain: how long the outbox dispatcher gets to deliver the settlements' wires (the emulator serialises its writes). */
const DELIVERY_TIMEOUT_MS = 600_000;
/** About how long the replicas take to start and the jobs to be stored (places a DST transition in the window). */
const SETUP_ESTIMATE_MS = 8000;
// Short windows and sweeps so a dropped message is recovered inside a short drill; no `committed`
// events on the bus (nobody routes them here, and the emulator's one core is the drill's bottleneck).
const REPLICA_ENV = {
  CRONFENCE_SHARDS: '4',
  CRONFENCE_LOOKAHEAD_MS: '20000',
  CRONFENCE_SWEEP_GRACE_MS: '5000',
  CRONFENCE_PUBLISH_SUCCEEDED: 'false',
};

export async function runDrill(options: DrillOptions): Promise<ChaosReport> {
  const endpoint = await ensureAwsEndpoint();
  const prefix = `chaos${options.seed}-${randomUUID().slice(0, 6)}`;
  const env = { ...process.env, ...REPLICA_ENV, CRONFENCE_PREFIX: prefix };
  // DST mode: the drill's clock and every replica's run `dstOffsetMs` ahead (or behind) of real time.
  const dstOffsetMs = options.dst ? dstClockOffsetMs(options.dst, Date.now(), options.durationSeconds * 1000, SETUP_ESTIMATE_MS) : 0;
  const clock: Clock = dstOffsetMs !== 0 ? new OffsetClock(dstOffsetMs) : systemClock;
  // The drill's own requests (setup, lifecycle changes, the checks) are not under test: a loaded emulator may keep
  // one waiting longer than the engine's 3 s x 3 tries, which stopped 300 s drills at their start without a verdict.
  const runtime = createRuntime({ env, clock, clients: createAwsClients(undefined, DRILL_CLIENT_PATIENCE) });
  const random = new SeededRandom(options.seed);
  const enabled = new Set(options.faults);
  const rates: FaultRates = { ...DEFAULT_FAULT_RATES, ...options.rates };
  const recorder = new HistoryRecorder();
  const meters = new FleetMeters();
  const fleet = new ReplicaFleet({
    onToolMessage: meters.onToolMessage,
    entry: options.replicaEntry ?? CHAOS_REPLICA,
    logFile: path.join(options.outDir, 'replicas.log'),
    env,
    onEvent: (event, replica) => recorder.event(event, replica),
    onReport: (report, replica) => recorder.report(report, replica, clock.now()),
  });
  let phase: DrillProgress['phase'] = 'starting';
  const progress = (now: DrillProgress['phase'], since: number): void => {
    phase = now;
    options.onProgress?.({
      phase,
      elapsedSeconds: Math.round((clock.now() - since) / 1000),
      committed: recorder.committed,
      faults: recorder.totalFaults(),
    });
  };
  mkdirSync(options.outDir, { recursive: true });
  const timers = new Set<NodeJS.Timeout>();
  let settlement: SettlementDrill | undefined;
  // Interrupted: a paused replica would otherwise stay stopped, holding its sockets, after we are gone.
  const interrupted = (signal: NodeJS.Signals): void => {
    fleet.killAllNow();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    progress('starting', clock.now());
    await prepareStores(runtime, prefix);
    const spawn = spawner(options.seed, fleet, recorder, random, enabled, rates, dstOffsetMs);
    if (options.settlement) {
      const faultKinds = (['kill', 'pause'] as const).filter((kind) => enabled.has(kind));
      settlement = await SettlementDrill.start({
        runtime,
        prefix,
        seed: options.seed,
        clock,
        faultKinds,
        pauseMs: LEASE_MS + 2000,
        process: { fleet, recorder, clock, spawn },
      });
      const drill = settlement;
      recorder.onChunk = (chunk, replica) => drill.onChunk(chunk, replica);
    }
    for (let i = 1; i <= options.scanners; i++) spawn('scanner', i);
    for (let i = 1; i <= options.workers; i++) spawn('worker', i);
    await Promise.all(fleet.list().map((replica) => replica.ready));
    if (enabled.has('skew')) recorder.faults.skew = fleet.list().filter((r) => recorder.offsets.get(r.id) !== 0).length;
    if (enabled.has('slowHandler')) recorder.faults.slowHandler = Math.ceil(options.jobs / 5);

    const specs = chaosJobs(options.jobs, new SeededRandom(options.seed + 1), { dst: options.dst !== undefined });
    const book = new JobHistoryBook();
    for (const spec of specs) book.record('create', (await runtime.jobs().put(spec)).job);
    const settlementSpec = settlement?.spec();
    if (settlementSpec) book.record('create', (await runtime.jobs().put(settlementSpec)).job);
    const policies = await setUpPolicyJobs(runtime, book, clock.now());
    const startedAt = clock.now();
    await tick(runtime.scanQueue, runtime.config.shardCount);
    timers.add(setInterval(() => void tick(runtime.scanQueue, runtime.config.shardCount).catch(() => {}), TICK_MS));
    progress('running', startedAt);
    const running = setInterval(() => progress('running', startedAt), 1000);
    timers.add(running);

    const [, poisoner] = await Promise.all([
      executePlan(options, clock, startedAt, fleet, recorder, random, spawn),
      changeJobs({
        seed: options.seed,
        durationMs: options.durationSeconds * 1000,
        faults: enabled,
        clock,
        startedAt,
        runtime,
        specs,
        book,
        recorder,
      }),
    ]);
    const endedAt = clock.now();
    settlement?.windowEnded(endedAt);
    clearInterval(running);
    progress('draining', startedAt);
    timers.add(setInterval(() => progress('draining', startedAt), 1000));
    // Jobs keep firing while the window drains; only occurrences inside the window are checked.
    const enumerate = options.dst ? scheduleMathOccurrences : cronParserOccurrences;
    const expected = [
      ...expectedOccurrences(book.histories(), startedAt, endedAt, enumerate),
      ...outageOccurrences(policies.outages, startedAt, enumerate),
    ];
    const drained = specs.concat(settlementSpec ? [settlementSpec] : [], policies.specs);
    const latestOffset = Math.max(
      0,
      ...drained.map((spec) => (spec.jitter === undefined ? 0 : jitterOffsetMs(spec.id, parseJobSpec(spec).policies.jitterMs))),
    );
    const drainFrom = Math.min(startedAt, ...policies.outages.map((outage) => outage.outageFrom));
    await drainWindow(
      runtime,
      { jobIds: drained.map((spec) => spec.id), fromMs: drainFrom, toMs: endedAt, startsBefore: endedAt + latestOffset },
      DRAIN_TIMEOUT_MS,
    );
    await settlement?.stopFaults();
    for (const timer of timers) clearInterval(timer);
    await fleet.stopAll();
    progress('checking', startedAt);

    const checked = specs.concat(settlementSpec ? [settlementSpec] : []);
    const wheel = await readWheel(runtime);
    const checkedRun = await readAndCheck(runtime, prefix, checked, policies, recorder, expected, startedAt, enumerate, settlement);
    const { policyViolations, settlementSection } = checkedRun;
    // A poisoned job's occurrences that met its bad row are its own fault, not missed (poison-checks.ts).
    const poisonVerdict = poisoner ? await readPoisonVerdict(runtime, poisoner, recorder, expected, checkedRun.verdict) : undefined;
    const verdict = poisonVerdict ? { ...checkedRun.verdict, missed: poisonVerdict.missed } : checkedRun.verdict;
    const poison = poisoner && poisonVerdict ? { verdict: poisonVerdict, poisonings: poisoner.poisonings() } : undefined;
    const dst = options.dst
      ? { mode: options.dst, transition: DST_TRANSITIONS[options.dst].description, clockOffsetMs: dstOffsetMs }
      : undefined;
    const report = buildReport({
      prefix,
      options,
      rates: ratesInUse(rates, enabled),
      dst,
      verdict,
      policyViolations,
      faults: recorder.faults,
      expected: expected.length,
      startedAt,
      endedAt,
      drainedAt: clock.now(),
      requests: meters.requests,
      settlement: settlementSection,
      poison,
    });
    writeOutputs(options, report, recorder, book, wheel, verdict, startedAt, clock.now());
    return report;
  } catch (error) {
    if (error instanceof CronfenceError) throw error;
    throw new DrillAbortedError(phase, path.join(options.outDir, 'replicas.log'), error);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    for (const timer of timers) clearInterval(timer);
    await fleet.stopAll();
    await settlement?.close();
    destroyAwsClients(runtime.clients);
    await endpoint.stop();
  }
}

/** Starts a replica in a slot (a replacement gets the next generation: `worker-2.3`), with its skew and its faults. */
function spawner(
  seed: number,
  fleet: ReplicaFleet,
  recorder: HistoryRecorder,
  random: SeededRandom,
  enabled: ReadonlySet<FaultKind>,
  rates: FaultRates,
  dstOffsetMs: number,
): (role: ReplicaRole, slot: number) => Replica {
  return (role, slot) => {
    const id = `${role}-${slot}.${recorder.nextGeneration(role, slot)}`;
    const skew = enabled.has('skew') ? random.int(-2000, 2000) : 0;
    recorder.offsets.set(id, skew);
    return fleet.spawn(role, id, { [CHAOS_ENV]: encodeChaosConfig(replicaChaos(seed, dstOffsetMs + skew, enabled, rates, random)) });
  };
}

/** What the stores hold after the drain, checked against what the replicas reported. */
async function readAndCheck(
  runtime: Runtime,
  prefix: string,
  specs: readonly JobSpecInput[],
  policies: PolicySetup,
  recorder: HistoryRecorder,
  expected: ReturnType<typeof expectedOccurrences>,
  startedAt: number,
  enumerate: Enumerate,
  settlement?: SettlementDrill,
): Promise<{ verdict: HistoryVerdict; policyViolations: string[]; settlementSection?: SettlementReport }> {
  const outageFrom = Math.min(startedAt, ...policies.outages.map((outage) => outage.outageFrom));
  const [randomSlices, policySlices, effects, deadLetters] = await Promise.all([
    readSlices(
      runtime,
      specs.map((spec) => spec.id),
      startedAt,
    ),
    readSlices(
      runtime,
      policies.specs.map((spec) => spec.id),
      outageFrom,
    ),
    readEffects(runtime, prefix),
    readDeadLetters(runtime),
  ]);
  const slices = [...randomSlices, ...policySlices];
  const settled = settlement
    ? await settlement.collect(
        expected.filter((o) => o.jobId === SETTLEMENT_JOB_ID),
        slices,
        DELIVERY_TIMEOUT_MS,
      )
    : undefined;
  effects.push(...(settled?.summaries ?? []));
  const { events, renewals, processFaults, clientFaults, receives } = recorder;
  const misfireOf = new Map(policies.outages.map((outage) => [outage.jobId, outage.misfire]));
  const overlapOf = new Map(OVERLAP_JOBS.map(({ id, overlap }) => [id, overlap]));
  const startOffsetOf = new Map(
    specs.flatMap((spec) =>
      spec.jitter === undefined ? [] : [[spec.id, jitterOffsetMs(spec.id, parseJobSpec(spec).policies.jitterMs)] as const],
    ),
  );
  const verdict = checkHistory({
    events,
    renewals,
    processFaults,
    clientFaults,
    receives,
    slices,
    ledger: ledgerOfSlices(slices),
    effects,
    deadLetters,
    expected,
    misfireOf,
    overlapOf,
    startOffsetOf,
    catchUpBefore: startedAt,
    lateByDesign: new Set(overlapOf.keys()),
  });
  const oneTime = await Promise.all(
    policies.specs
      .filter((spec) => spec.policies?.afterOneTime !== undefined)
      .map(async (spec) => ({
        jobId: spec.id,
        afterOneTime: spec.policies?.afterOneTime ?? 'complete',
        record: await readJobRecord(runtime, spec.id),
      })),
  );
  const policyViolations = [
    ...checkPolicies({ slices: policySlices, outages: policies.outages, startedAt, enumerate, oneTime }),
    ...checkOverlapRuns({ events, processFaults, overlapOf }),
  ];
  const settlementSection = settlement && settled ? checkSettlementRun(settlement, settled.records, recorder, verdict) : undefined;
  return { verdict, policyViolations, settlementSection };
}

function checkSettlementRun(
  settlement: SettlementDrill,
  records: SettlementStoreRecords[],
  recorder: HistoryRecorder,
  verdict: HistoryVerdict,
): SettlementReport {
  const settlementVerdict = checkSettlement({
    merchants: SETTLEMENT_MERCHANTS,
    chunks: SETTLEMENT_CHUNKS,
    occurrences: records,
    reports: recorder.chunks,
    failovers: verdict.failovers,
    processFaults: recorder.processFaults,
  });
  const { requests, replays, refused } = settlement.bank;
  return settlementReport(settlementVerdict, {
    merchants: SETTLEMENT_MERCHANTS,
    chunks: SETTLEMENT_CHUNKS,
    failoverBoundMs: FAILOVER_GOAL_MS,
    injected: settlement.injected,
    bank: { requests, replays, refused },
  });
}

function writeOutputs(
  options: DrillOptions,
  report: ChaosReport,
  recorder: HistoryRecorder,
  book: JobHistoryBook,
  wheel: readonly Record<string, unknown>[],
  verdict: HistoryVerdict,
  startedAt: number,
  endedAt: number,
): void {
  writeFileSync(path.join(options.outDir, 'report.json'), JSON.stringify(report, null, 2));
  writeFileSync(
    path.join(options.outDir, 'events.jsonl'),
    recorder.events.map((o) => JSON.stringify({ replica: o.replica, offsetMs: o.offsetMs, ...o.event })).join('\n'),
  );
  // What the checker read besides the stores, so a verdict can be examined again.
  writeFileSync(path.join(options.outDir, 'renewals.jsonl'), recorder.renewals.map((renewal) => JSON.stringify(renewal)).join('\n'));
  writeFileSync(path.join(options.outDir, 'process-faults.json'), JSON.stringify(recorder.processFaults, null, 2));
  writeFileSync(path.join(options.outDir, 'client-faults.jsonl'), recorder.clientFaults.map((fault) => JSON.stringify(fault)).join('\n'));
  writeFileSync(path.join(options.outDir, 'receives.jsonl'), recorder.receives.map((receive) => JSON.stringify(receive)).join('\n'));
  writeFileSync(path.join(options.outDir, 'sends.jsonl'), recorder.sends.map((send) => JSON.stringify(send)).join('\n'));
  writeFileSync(path.join(options.outDir, 'wheel.jsonl'), wheel.map((item) => JSON.stringify(item)).join('\n'));
  // Each job's recorded history: what the expected occurrences followed.
  writeFileSync(
    path.join(options.outDir, 'jobs.json'),
    JSON.stringify(
      book.histories().filter((history) => history.changes.length > 1),
      null,
      2,
    ),
  );
  writeFileSync(
    path.join(options.outDir, 'timeline.svg'),
    renderTimelineSvg({
      events: recorder.events,
      processFaults: recorder.processFaults,
      chunks: recorder.chunks,
      verdict,
      startedAt,
      endedAt,
      title: `npm run chaos -- --seed ${options.seed}${options.dst ? ` --dst ${options.dst}` : ''}${options.settlement ? ' --settlement' : ''}: ${options.jobs} jobs, ${options.workers} workers, ${options.scanners} scanners, ${options.durationSeconds} s`,
    }),
  );
}

/** The rates of the faults that are on, for the report (`replay` belongs to `duplicate`). */
function ratesInUse(rates: FaultRates, enabled: ReadonlySet<FaultKind>): Record<string, number> {
  return Object.fromEntries(Object.entries(rates).filter(([name]) => enabled.has((name === 'replay' ? 'duplicate' : name) as FaultKind)));
}

function replicaChaos(
  seed: number,
  clockOffsetMs: number,
  enabled: ReadonlySet<FaultKind>,
  rates: FaultRates,
  random: SeededRandom,
): ReplicaChaosConfig {
  const rate = (fault: FaultKind, value: number): number => (enabled.has(fault) ? value : 0);
  return {
    seed: seed * 1_000_003 + random.int(0, 1_000_000),
    clockOffsetMs,
    dropRate: rate('drop', rates.drop),
    duplicateRate: rate('duplicate', rates.duplicate),
    replayRate: rate('duplicate', rates.replay),
    delayRate: rate('delay', rates.delay),
    ambiguousCommitRate: rate('ambiguousCommit', rates.ambiguousCommit),
    throttleRate: rate('throttle', rates.throttle),
    hangRate: rate('hang', rates.hang),
    lateDuplicateRate: rate('lateDuplicate', rates.lateDuplicate),
  };
}

async function executePlan(
  options: DrillOptions,
  clock: Clock,
  startedAt: number,
  fleet: ReplicaFleet,
  recorder: HistoryRecorder,
  random: SeededRandom,
  spawn: (role: ReplicaRole, slot: number) => Replica,
): Promise<void> {
  const plan = planFaults({ seed: options.seed, durationMs: options.durationSeconds * 1000, faults: options.faults, leaseMs: LEASE_MS });
  const pending: Promise<void>[] = [];
  for (const fault of plan) {
    await sleepUntil(clock, startedAt + fault.atMs);
    const role: ReplicaRole = fault.kind === 'scannerKill' ? 'scanner' : 'worker';
    const candidates = fleet.list(role).filter((replica) => !recorder.paused.has(replica.id));
    if (candidates.length === 0) continue;
    const busy = role === 'worker' ? candidates.filter((replica) => recorder.isBusy(replica.id)) : [];
    const victim = random.pick(busy.length > 0 ? busy : candidates);
    pending.push(stopReplica({ fleet, recorder, clock, spawn }, victim, fault.kind, fault.pauseMs ?? LEASE_MS + 2000));
  }
  await sleepUntil(clock, startedAt + options.durationSeconds * 1000);
  await Promise.all(pending);
}
