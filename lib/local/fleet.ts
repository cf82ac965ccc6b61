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
import type { ParentMessage, ReplicaMessage, ReplicaReport, ReplicaRole, ToolMessage } from './replica-messages.ts';

export type { ReplicaReport, ReplicaRole, ToolMessage };

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
  /** The messages of a tool attached to the replicas (tools/meter), unread. */
  readonly onToolMessage?: (message: ToolMessage, replica: Replica) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** A user's jobs module the workers run (`cronfence dev --jobs`). @default none: the entry's own handlers */
  readonly jobsModule?: string;
}

/** A replica that exited before it was ready. */
export class ReplicaStartError extends CronfenceError {
  override name = 'ReplicaStartError';
}

const DEV_REPLICA = 'lib/local/dev-replica.ts';
const STOP_GRACE_MS = 8000;

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

export class ReplicaFleet {
  private readonly replicas = new Map<string, Replica>();
  private readonly logFd: number;
  private logClosed = false;
  private readonly exited = new Set<string>();
  private readonly killed = new Set<string>();

  constructor(private readonly options: FleetOptions) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    this.logFd = openSync(options.logFile, 'a');
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
    const member: Replica = { id, role, process: child, ready, exited };
    child.on('message', (message: ReplicaMessage) => this.receive(member, message, markReady));
    void exited.then(() => {
      markReady();
      this.exited.add(id);
    });
    this.replicas.set(id, member);
    return member;
  }

  private receive(member: Replica, message: ReplicaMessage, markReady: () => void): void {
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
      default:
        return this.options.onToolMessage?.(message, member);
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

  /** A tool's message to a live replica (the request meter's request for a snapshot). */
  send(replica: Replica, message: ParentMessage): void {
    if (this.isAlive(replica) && replica.process.connected) replica.process.send(message);
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
