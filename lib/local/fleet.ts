/**
 * Scanner and worker replicas as separate OS processes (a kill is a real
 * kill). Their lifecycle events arrive over IPC; their logs go to a file so
 * the terminal stays readable.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { LifecycleEvent } from '../core/events.ts';
import { addCounts, type RequestCounts } from '../aws/request-counter.ts';
import { BUILD, packageFile } from '../package/package-files.ts';
import type { ReplicaRole } from './replica-process.ts';

export type { ReplicaRole };

export interface Replica {
  readonly id: string;
  readonly role: ReplicaRole;
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
}

/** What a replica reports besides lifecycle events (chaos faults it injected, lease renewals). */
export type ReplicaMessage =
  | { readonly kind: 'fault'; readonly fault: string }
  | { readonly kind: 'renewed'; readonly executionKey: string; readonly fence: number; readonly at: number };

export interface FleetOptions {
  readonly logFile: string;
  readonly onEvent: (event: LifecycleEvent, replica: Replica) => void;
  readonly onMessage?: (message: ReplicaMessage, replica: Replica) => void;
  readonly env?: NodeJS.ProcessEnv;
  /** A user's jobs module the workers run (`cronfence dev --jobs`). @default the example handlers */
  readonly jobsModule?: string;
}

/** This build's replica entry (the source through tsx, or the compiled one). */
const REPLICA_ENTRY = packageFile('lib/local/replica.ts');
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
 * The replica entry for a jobs module: the CommonJS build's for a CommonJS
 * module (its `require('cronfence')` then meets the engine's own copy), else
 * this build's. From the sources there is only the one.
 */
function replicaEntry(jobsModule: string | undefined): string {
  if (jobsModule && BUILD !== 'source' && moduleFormat(jobsModule) === 'cjs') return packageFile('lib/local/replica.ts', 'cjs');
  return REPLICA_ENTRY;
}

export class ReplicaFleet {
  private readonly replicas = new Map<string, Replica>();
  private readonly logFd: number;
  private logClosed = false;
  private readonly exited = new Set<string>();
  private readonly killed = new Set<string>();
  /** AWS requests the replicas reported as they stopped (a killed replica reports none). */
  readonly requests: RequestCounts = {};

  constructor(private readonly options: FleetOptions) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    this.logFd = openSync(options.logFile, 'a');
  }

  spawn(role: ReplicaRole, id: string, extraEnv: Record<string, string> = {}): Replica {
    // Only workers run handlers.
    const jobsModule = role === 'worker' && this.options.jobsModule ? path.resolve(this.options.jobsModule) : undefined;
    const child = fork(replicaEntry(jobsModule), [role, id, ...(jobsModule ? ['--jobs', jobsModule] : [])], {
      execArgv: ['--import', import.meta.resolve('tsx'), '--no-warnings=ExperimentalWarning'],
      stdio: ['ignore', this.logFd, this.logFd, 'ipc'],
      env: { ...(this.options.env ?? process.env), ...extraEnv },
      // Its own process group: a Ctrl-C in the terminal reaches only the parent, which stops replicas in order.
      detached: true,
    });
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const replica: Replica = { id, role, process: child, ready, exited };
    child.on('message', (message: { kind: string; event?: LifecycleEvent; counts?: RequestCounts }) => {
      if (message.kind === 'ready') markReady();
      else if (message.kind === 'event' && message.event) this.options.onEvent(message.event, replica);
      else if (message.kind === 'requests' && message.counts) addCounts(this.requests, message.counts);
      else if (message.kind === 'fault' || message.kind === 'renewed') this.options.onMessage?.(message as ReplicaMessage, replica);
    });
    void exited.then(() => {
      markReady();
      this.exited.add(id);
    });
    this.replicas.set(id, replica);
    return replica;
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
