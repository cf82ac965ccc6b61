/**
 * Scanner and worker replicas as separate OS processes (a kill is a real
 * kill), for `cronfence dev`, the chaos drill and the bench alike: each
 * gives the replica entry module it forks (replica.ts says what one does).
 * Their reports arrive as typed IPC messages (replica-messages.ts); their
 * logs go to a file so the terminal stays readable.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CronfenceError } from '../core/errors.ts';
import type { LifecycleEvent } from '../core/events.ts';
import type { ScanReport } from '../engine/scanner.ts';
import { BUILD, packageFile } from '../package/package-files.ts';
import type { ParentMessage, ReplicaMessage, ReplicaReport, ReplicaRole } from './replica-messages.ts';
import { addSnapshots, emptySnapshot, type MeterSnapshot } from './request-meter.ts';

export type { ReplicaReport, ReplicaRole };

export interface Replica {
  readonly id: string;
  readonly role: ReplicaRole;
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface ScanObservation {
  readonly report: ScanReport;
  /** When the scanner finished the scan (its clock). */
  readonly at: number;
}

export interface RoleMeters {
  readonly scanner: MeterSnapshot;
  readonly worker: MeterSnapshot;
}

export interface FleetOptions {
  readonly logFile: string;
  /**
   * The replica entry module to fork (one that calls startReplica).
   * @default `cronfence dev`'s (lib/local/dev-replica.ts, of this build)
   */
  readonly entry?: string;
  readonly onEvent: (event: LifecycleEvent, replica: Replica) => void;
  readonly onScan?: (scan: ScanObservation, replica: Replica) => void;
  readonly onReport?: (report: ReplicaReport, replica: Replica) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** A user's jobs module the workers run (`cronfence dev --jobs`). @default the example handlers */
  readonly jobsModule?: string;
}

/** A replica that exited before it was ready. */
export class ReplicaStartError extends CronfenceError {
  override name = 'ReplicaStartError';
}

const DEV_REPLICA = 'lib/local/dev-replica.ts';
const STOP_GRACE_MS = 8000;
const METER_TIMEOUT_MS = 10_000;

const FORMAT_BY_EXTENSION: Record<string, 'esm' | 'cjs' | undefined> = { '.mts': 'esm', '.mjs': 'esm', '.cts': 'cjs', '.cjs': 'cjs' };

/** How Node (and tsx) load a file: by its extension, else by the nearest package.json's "type". */
export function moduleFormat(file: string): 'esm' | 'cjs' {
  const byExtension = FORMAT_BY_EXTENSION[path.extname(file)];
  if (byExtension) return byExtension;
  for (let dir = path.dirname(path.resolve(file)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type === 'module' ? 'esm' : 'cjs';
    if (path.dirname(dir) === dir) return 'cjs';
  }
}

/**
 * The dev replica for a jobs module: the CommonJS build's for a CommonJS
 * module (its `require('cronfence')` then meets the engine's own copy), else
 * this build's. From the sources there is only the one.
 */
function devReplicaEntry(jobsModule: string | undefined): string {
  if (jobsModule && BUILD !== 'source' && moduleFormat(jobsModule) === 'cjs') return packageFile(DEV_REPLICA, 'cjs');
  return packageFile(DEV_REPLICA);
}

interface Member extends Replica {
  /** The answer to a meter request in flight. */
  pendingMeter?: (snapshot: MeterSnapshot) => void;
}

export class ReplicaFleet {
  private readonly replicas = new Map<string, Member>();
  private readonly logFd: number;
  private logClosed = false;
  private readonly exited = new Set<string>();
  private readonly killed = new Set<string>();
  /** The meters the replicas sent as they stopped (a killed replica sends none). */
  private stopped: MeterSnapshot = emptySnapshot();

  constructor(private readonly options: FleetOptions) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    this.logFd = openSync(options.logFile, 'a');
  }

  /** AWS requests, by service.Operation, of the replicas that stopped cleanly. */
  get requests(): Record<string, number> {
    return this.stopped.requests;
  }

  spawn(role: ReplicaRole, id: string, extraEnv: Record<string, string> = {}): Replica {
    // Only workers run handlers.
    const jobsModule = role === 'worker' && this.options.jobsModule ? path.resolve(this.options.jobsModule) : undefined;
    const entry = this.options.entry ?? devReplicaEntry(jobsModule);
    const child = fork(entry, [role, id, ...(jobsModule ? ['--jobs', jobsModule] : [])], {
      execArgv: ['--import', import.meta.resolve('tsx'), '--no-warnings=ExperimentalWarning'],
      stdio: ['ignore', this.logFd, this.logFd, 'ipc'],
      env: { ...(this.options.env ?? process.env), ...extraEnv },
      // Its own process group: a Ctrl-C in the terminal reaches only the parent, which stops replicas in order.
      detached: true,
    });
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const member: Member = { id, role, process: child, ready, exited };
    child.on('message', (message: ReplicaMessage) => this.receive(member, message, markReady));
    void exited.then(() => {
      markReady();
      this.exited.add(id);
    });
    this.replicas.set(id, member);
    return member;
  }

  private receive(member: Member, message: ReplicaMessage, markReady: () => void): void {
    switch (message.kind) {
      case 'ready':
        return markReady();
      case 'event':
        return this.options.onEvent(message.event, member);
      case 'scan':
        return this.options.onScan?.({ report: message.report, at: message.at }, member);
      case 'fault':
      case 'received':
      case 'sent':
      case 'renewed':
      case 'chunk':
        return this.options.onReport?.(message, member);
      case 'meter':
        if (message.final) this.stopped = addSnapshots(this.stopped, message.snapshot);
        member.pendingMeter?.(message.snapshot);
        member.pendingMeter = undefined;
    }
  }

  /** Waits for every replica spawned so far to be ready. @throws {ReplicaStartError} when one exited first. */
  async whenReady(): Promise<void> {
    const replicas = [...this.replicas.values()];
    await Promise.all(replicas.map((replica) => replica.ready));
    const failed = replicas.find((replica) => !this.isAlive(replica));
    if (failed) {
      throw new ReplicaStartError(
        `replica ${failed.id} exited before it was ready (exit code ${String(failed.process.exitCode)}); its output is in ${this.options.logFile}`,
      );
    }
  }

  get(id: string): Replica | undefined {
    return this.replicas.get(id);
  }

  /** Replicas not yet exited (a signalled process keeps a null exit code, so track exits). */
  list(role?: ReplicaRole): Replica[] {
    return [...this.replicas.values()].filter((replica) => (!role || replica.role === role) && this.isAlive(replica));
  }

  isAlive(replica: Replica): boolean {
    return !this.exited.has(replica.id) && !this.killed.has(replica.id);
  }

  /** The live replicas' meters now, added up by role. */
  async meters(): Promise<RoleMeters> {
    const members = [...this.replicas.values()].filter((member) => this.isAlive(member));
    const snapshots = await Promise.all(members.map((member) => this.meterOf(member)));
    const byRole = (role: ReplicaRole): MeterSnapshot =>
      snapshots.filter((_, i) => members[i]?.role === role).reduce(addSnapshots, emptySnapshot());
    return { scanner: byRole('scanner'), worker: byRole('worker') };
  }

  private meterOf(member: Member): Promise<MeterSnapshot> {
    return new Promise<MeterSnapshot>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CronfenceError(`replica ${member.id} did not report its meter`)), METER_TIMEOUT_MS);
      member.pendingMeter = (snapshot) => {
        clearTimeout(timer);
        resolve(snapshot);
      };
      const request: ParentMessage = { kind: 'meter' };
      member.process.send(request);
    });
  }

  /** SIGKILL: the replica is gone at once, as far as choosing victims goes. */
  kill(replica: Replica): void {
    this.killed.add(replica.id);
    replica.process.kill('SIGKILL');
  }

  /** At once and without cleanup (the parent is being interrupted): a stopped (SIGSTOP) replica is killed too. */
  killAllNow(): void {
    for (const replica of this.replicas.values()) {
      if (!this.exited.has(replica.id)) replica.process.kill('SIGKILL');
    }
  }

  /** SIGTERM every replica (they finish in-flight work), SIGKILL what is left after a grace period. */
  async stopAll(): Promise<void> {
    const running = [...this.replicas.values()].filter((replica) => !this.exited.has(replica.id));
    for (const replica of running) replica.process.kill('SIGTERM');
    const timer = setTimeout(() => running.forEach((replica) => replica.process.kill('SIGKILL')), STOP_GRACE_MS);
    await Promise.all(running.map((replica) => replica.exited));
    clearTimeout(timer);
    this.replicas.clear();
    if (!this.logClosed) closeSync(this.logFd);
    this.logClosed = true;
  }
}
