/**
 * `cronfence chaos`: the real scanners and workers as separate processes,
 * a seeded plan of faults (kills, pauses, scanner kills, duplicated, delayed
 * and dropped messages, clock skew, lost commit replies, slow handlers), then
 * a check of the recorded history against the invariants.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { bootstrap, createTableInput } from '../aws/bootstrap.ts';
import { destroyAwsClients } from '../aws/clients.ts';
import { toLedgerRecord } from '../aws/dynamo/items.ts';
import { scanAll } from '../aws/dynamo/read-pages.ts';
import type { LedgerRecord } from '../core/ledger.ts';
import type { StoredJob } from '../core/ports.ts';
import type { Slice } from '../core/slice.ts';
import { tick } from '../engine/ticker.ts';
import { ensureAwsEndpoint } from '../runtime/emulator.ts';
import { ReplicaFleet, type Replica, type ReplicaRole } from '../runtime/fleet.ts';
import { createRuntime, type Runtime } from '../runtime/wiring.ts';
import { chaosJobs, EFFECTS_TABLE, effectsTableName } from './chaos-jobs.ts';
import { CHAOS_ENV, encodeChaosConfig, type FaultKind, type ReplicaChaosConfig } from './config.ts';
import { expectedExecutionKeys } from './expected.ts';
import { planFaults } from './fault-plan.ts';
import { checkHistory, type Effect, type InjectedProcessFault, type ObservedEvent, type ObservedRenewal } from './history.ts';
import { buildReport, type ChaosReport } from './report.ts';
import { SeededRandom } from './random.ts';
import { renderTimelineSvg } from './timeline-svg.ts';

export interface DrillOptions {
  readonly scanners: number;
  readonly workers: number;
  readonly jobs: number;
  readonly durationSeconds: number;
  readonly seed: number;
  readonly faults: readonly FaultKind[];
  readonly outDir: string;
  /** Extra environment for every replica (the broken-engine test's store wrapper). */
  readonly replicaEnv?: Record<string, string>;
  readonly onProgress?: (progress: DrillProgress) => void;
}

export interface DrillProgress {
  readonly phase: 'starting' | 'running' | 'draining' | 'checking';
  readonly elapsedSeconds: number;
  readonly committed: number;
  readonly faults: number;
}

const LEASE_MS = 4000;
const TICK_MS = 5000;
const DRAIN_TIMEOUT_MS = 90_000;
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
  const env = { ...process.env, ...REPLICA_ENV, ...options.replicaEnv, CRONFENCE_PREFIX: prefix };
  const runtime = createRuntime({ env });
  const random = new SeededRandom(options.seed);
  const enabled = new Set(options.faults);
  const recorder = new HistoryRecorder();
  const fleet = new ReplicaFleet({
    logFile: path.join(options.outDir, 'replicas.log'),
    env,
    onEvent: (event, replica) => recorder.event(event, replica),
    onMessage: (message, replica) => recorder.message(message, replica),
  });
  const progress = (phase: DrillProgress['phase'], since: number): void =>
    options.onProgress?.({ phase, elapsedSeconds: Math.round((Date.now() - since) / 1000), committed: recorder.committed, faults: recorder.totalFaults() });
  mkdirSync(options.outDir, { recursive: true });
  let ticker: NodeJS.Timeout | undefined;
  let progressTimer: NodeJS.Timeout | undefined;
  // Interrupted: a paused replica would otherwise stay stopped, holding its sockets, after we are gone.
  const interrupted = (signal: NodeJS.Signals): void => {
    fleet.killAllNow();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    progress('starting', Date.now());
    await prepare(runtime, prefix);
    const spawn = (role: ReplicaRole, slot: number): Replica => {
      const id = `${role}-${slot}.${recorder.nextGeneration(role, slot)}`;
      const offset = enabled.has('skew') ? random.int(-2000, 2000) : 0;
      recorder.offsets.set(id, offset);
      return fleet.spawn(role, id, { [CHAOS_ENV]: encodeChaosConfig(replicaChaos(options.seed, offset, enabled, random)) });
    };
    for (let i = 1; i <= options.scanners; i++) spawn('scanner', i);
    for (let i = 1; i <= options.workers; i++) spawn('worker', i);
    await Promise.all(fleet.list().map((replica) => replica.ready));
    if (enabled.has('skew')) recorder.faults.skew = fleet.list().filter((r) => recorder.offsets.get(r.id) !== 0).length;
    if (enabled.has('slowHandler')) recorder.faults.slowHandler = Math.ceil(options.jobs / 5);

    const repository = runtime.jobs();
    const jobs: StoredJob[] = [];
    for (const spec of chaosJobs(options.jobs, new SeededRandom(options.seed + 1))) jobs.push((await repository.put(spec)).job);
    const startedAt = Date.now();
    await tick(runtime.scanQueue, runtime.config.shardCount);
    ticker = setInterval(() => void tick(runtime.scanQueue, runtime.config.shardCount).catch(() => {}), TICK_MS);
    progressTimer = setInterval(() => progress('running', startedAt), 1000);

    await executePlan(options, startedAt, fleet, recorder, random, spawn);
    const endedAt = Date.now();
    clearInterval(progressTimer);
    progressTimer = setInterval(() => progress('draining', startedAt), 1000);
    // Jobs keep firing while the window drains; only occurrences inside the window are checked.
    const expected = expectedExecutionKeys(jobs, startedAt, endedAt);
    await drain(runtime, endedAt);
    clearInterval(ticker);
    ticker = undefined;
    await fleet.stopAll();
    clearInterval(progressTimer);
    progress('checking', startedAt);

    const [slices, ledger, effects] = await Promise.all([readSlices(runtime, jobs, startedAt), readLedger(runtime), readEffects(runtime, prefix)]);
    const verdict = checkHistory({ events: recorder.events, renewals: recorder.renewals, processFaults: recorder.processFaults, slices, ledger, effects, expected });
    const report = buildReport({
      options,
      verdict,
      faults: recorder.faults,
      expected: expected.length,
      startedAt,
      endedAt,
      drainedAt: Date.now(),
      requests: fleet.requests,
    });
    writeFileSync(path.join(options.outDir, 'report.json'), JSON.stringify(report, null, 2));
    writeFileSync(path.join(options.outDir, 'events.jsonl'), recorder.events.map((o) => JSON.stringify({ replica: o.replica, offsetMs: o.offsetMs, ...o.event })).join('\n'));
    writeFileSync(
      path.join(options.outDir, 'timeline.svg'),
      renderTimelineSvg({
        events: recorder.events,
        processFaults: recorder.processFaults,
        verdict,
        startedAt,
        endedAt: Date.now(),
        title: `cronfence chaos --seed ${options.seed}: ${options.jobs} jobs, ${options.workers} workers, ${options.scanners} scanners, ${options.durationSeconds} s`,
      }),
    );
    return report;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    if (ticker) clearInterval(ticker);
    if (progressTimer) clearInterval(progressTimer);
    await fleet.stopAll();
    destroyAwsClients(runtime.clients);
    await endpoint.stop();
  }
}

function replicaChaos(seed: number, clockOffsetMs: number, enabled: ReadonlySet<FaultKind>, random: SeededRandom): ReplicaChaosConfig {
  return {
    seed: seed * 1_000_003 + random.int(0, 1_000_000),
    clockOffsetMs,
    dropRate: enabled.has('drop') ? 0.02 : 0,
    duplicateRate: enabled.has('duplicate') ? 0.05 : 0,
    replayRate: enabled.has('duplicate') ? 0.03 : 0,
    delayRate: enabled.has('delay') ? 0.05 : 0,
    ambiguousCommitRate: enabled.has('ambiguousCommit') ? 0.03 : 0,
  };
}

async function prepare(runtime: Runtime, prefix: string): Promise<void> {
  await bootstrap(runtime.clients, runtime.config);
  const table = effectsTableName(prefix);
  await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(table, EFFECTS_TABLE)));
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: table });
}

async function executePlan(
  options: DrillOptions,
  startedAt: number,
  fleet: ReplicaFleet,
  recorder: HistoryRecorder,
  random: SeededRandom,
  spawn: (role: ReplicaRole, slot: number) => Replica,
): Promise<void> {
  const plan = planFaults({ seed: options.seed, durationMs: options.durationSeconds * 1000, faults: options.faults, leaseMs: LEASE_MS });
  const pending: Promise<void>[] = [];
  for (const fault of plan) {
    await sleepUntil(startedAt + fault.atMs);
    const role: ReplicaRole = fault.kind === 'scannerKill' ? 'scanner' : 'worker';
    const candidates = fleet.list(role).filter((replica) => !recorder.paused.has(replica.id));
    if (candidates.length === 0) continue;
    const busy = role === 'worker' ? candidates.filter((replica) => recorder.isBusy(replica.id)) : [];
    const victim = random.pick(busy.length > 0 ? busy : candidates);
    const slot = Number(/-(\d+)\./.exec(victim.id)?.[1] ?? 1);
    if (fault.kind === 'pause') {
      victim.process.kill('SIGSTOP');
      const at = Date.now();
      recorder.paused.add(victim.id);
      pending.push(
        sleepUntil(at + (fault.pauseMs ?? LEASE_MS + 2000)).then(() => {
          victim.process.kill('SIGCONT');
          recorder.paused.delete(victim.id);
          recorder.processFault({ kind: 'pause', replica: victim.id, at, until: Date.now() });
        }),
      );
    } else {
      fleet.kill(victim);
      recorder.processFault({ kind: fault.kind, replica: victim.id, at: Date.now() });
      pending.push(victim.exited.then(() => void spawn(role, slot)));
    }
  }
  await sleepUntil(startedAt + options.durationSeconds * 1000);
  await Promise.all(pending);
}

/**
 * Waits until no live slice due in the drill window is left (or the drain
 * timeout passes). Live slices are exactly those in the sweep index.
 */
async function drain(runtime: Runtime, toMs: number): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (Date.now() < deadline) {
    let open = 0;
    for (let shard = 0; shard < runtime.config.shardCount; shard++) {
      const live = await runtime.slices.findSweepable(shard, Number.MAX_SAFE_INTEGER, 10_000);
      open += live.filter((slice) => slice.scheduledAt < toMs).length;
    }
    if (open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

async function readSlices(runtime: Runtime, jobs: readonly StoredJob[], fromMs: number): Promise<Slice[]> {
  const all: Slice[] = [];
  for (const job of jobs) all.push(...(await runtime.jobs().slicesOf(job.id, fromMs - 60_000)));
  return all;
}

async function readLedger(runtime: Runtime): Promise<LedgerRecord[]> {
  return (await scanAll(runtime.clients.dynamo, { TableName: runtime.config.ledgerTable, ConsistentRead: true })).map(toLedgerRecord);
}

async function readEffects(runtime: Runtime, prefix: string): Promise<Effect[]> {
  return (await scanAll(runtime.clients.dynamo, { TableName: effectsTableName(prefix), ConsistentRead: true })).map((item) => unmarshall(item) as Effect);
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

/** What the drill saw: events and renewals from replicas, faults it injected. */
class HistoryRecorder {
  readonly events: ObservedEvent[] = [];
  readonly renewals: ObservedRenewal[] = [];
  readonly processFaults: InjectedProcessFault[] = [];
  readonly offsets = new Map<string, number>();
  readonly paused = new Set<string>();
  readonly faults: Record<FaultKind, number> = {
    kill: 0,
    pause: 0,
    scannerKill: 0,
    duplicate: 0,
    delay: 0,
    drop: 0,
    skew: 0,
    ambiguousCommit: 0,
    slowHandler: 0,
  };
  committed = 0;
  private readonly inFlight = new Map<string, Set<string>>();
  private readonly generations = new Map<string, number>();

  nextGeneration(role: ReplicaRole, slot: number): number {
    const key = `${role}-${slot}`;
    const next = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, next);
    return next;
  }

  event(event: ObservedEvent['event'], replica: Replica): void {
    this.events.push({ replica: replica.id, offsetMs: this.offsets.get(replica.id) ?? 0, event });
    const attempt = `${event.executionKey}#${event.fence}`;
    const busy = this.inFlight.get(replica.id) ?? new Set<string>();
    this.inFlight.set(replica.id, busy);
    if (event.type === 'claimed') busy.add(attempt);
    else if (event.type !== 'started') busy.delete(attempt);
    if (event.type === 'committed') this.committed++;
  }

  message(message: { kind: string; fault?: string; executionKey?: string; fence?: number; at?: number }, replica: Replica): void {
    if (message.kind === 'fault' && message.fault && message.fault in this.faults) this.faults[message.fault as FaultKind]++;
    if (message.kind === 'renewed' && message.executionKey && message.fence !== undefined && message.at !== undefined) {
      this.renewals.push({ replica: replica.id, offsetMs: this.offsets.get(replica.id) ?? 0, executionKey: message.executionKey, fence: message.fence, at: message.at });
    }
  }

  processFault(fault: InjectedProcessFault): void {
    this.processFaults.push(fault);
    this.faults[fault.kind]++;
  }

  isBusy(replicaId: string): boolean {
    return (this.inFlight.get(replicaId)?.size ?? 0) > 0;
  }

  totalFaults(): number {
    return Object.values(this.faults).reduce((a, b) => a + b, 0);
  }
}
