/**
 * The bench's scanner and worker replicas as OS processes (bench-replica.ts),
 * as `cronfence dev` runs them, plus what the bench needs from them: their
 * lifecycle events, their scan reports, and their meters on demand.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LifecycleEvent } from '../core/events.ts';
import type { ScanReport } from '../engine/scanner.ts';
import { addSnapshots, emptySnapshot, type MeterSnapshot } from '../local/request-meter.ts';

const ENTRY = fileURLToPath(new URL('./bench-replica.ts', import.meta.url));
const STOP_GRACE_MS = 8000;
const METER_TIMEOUT_MS = 10_000;

export class BenchFleetError extends Error {
  override name = 'BenchFleetError';
}

export interface ScanObservation {
  readonly report: ScanReport;
  /** When the scanner finished the scan (its clock). */
  readonly at: number;
}

interface Member {
  readonly id: string;
  readonly role: 'scanner' | 'worker';
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  pendingMeter?: (snapshot: MeterSnapshot) => void;
}

export interface RoleMeters {
  readonly scanner: MeterSnapshot;
  readonly worker: MeterSnapshot;
}

export class BenchFleet {
  private readonly members: Member[] = [];
  private readonly logFd: number;

  constructor(
    private readonly options: {
      readonly env: NodeJS.ProcessEnv;
      readonly logFile: string;
      readonly onEvent: (event: LifecycleEvent) => void;
      readonly onScan: (scan: ScanObservation) => void;
    },
  ) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    this.logFd = openSync(options.logFile, 'a');
  }

  spawn(role: 'scanner' | 'worker', id: string): void {
    const child = fork(ENTRY, [role, id], {
      execArgv: ['--import', import.meta.resolve('tsx'), '--no-warnings=ExperimentalWarning'],
      stdio: ['ignore', this.logFd, this.logFd, 'ipc'],
      env: this.options.env,
    });
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const member: Member = { id, role, child, ready, exited };
    child.on('message', (message: { kind: string; event?: LifecycleEvent; report?: ScanReport; at?: number; snapshot?: MeterSnapshot }) => {
      if (message.kind === 'ready') markReady();
      else if (message.kind === 'event' && message.event) this.options.onEvent(message.event);
      else if (message.kind === 'scan' && message.report) this.options.onScan({ report: message.report, at: message.at ?? Date.now() });
      else if (message.kind === 'meter' && message.snapshot) {
        member.pendingMeter?.(message.snapshot);
        member.pendingMeter = undefined;
      }
    });
    void exited.then(markReady);
    this.members.push(member);
  }

  async ready(): Promise<void> {
    await Promise.all(this.members.map((member) => member.ready));
    const dead = this.members.filter((member) => member.child.exitCode !== null);
    if (dead.length > 0) throw new BenchFleetError(`replicas exited at start: ${dead.map((m) => m.id).join(', ')} (see ${this.options.logFile})`);
  }

  /** Replicas' meters, added up by role. */
  async meters(): Promise<RoleMeters> {
    const snapshots = await Promise.all(
      this.members.map(
        (member) =>
          new Promise<MeterSnapshot>((resolve, reject) => {
            const timer = setTimeout(() => reject(new BenchFleetError(`replica ${member.id} did not report its meter`)), METER_TIMEOUT_MS);
            member.pendingMeter = (snapshot) => {
              clearTimeout(timer);
              resolve(snapshot);
            };
            member.child.send({ kind: 'meter' });
          }),
      ),
    );
    const byRole = (role: Member['role']): MeterSnapshot =>
      snapshots.filter((_, i) => this.members[i]?.role === role).reduce(addSnapshots, emptySnapshot());
    return { scanner: byRole('scanner'), worker: byRole('worker') };
  }

  async stop(): Promise<void> {
    const running = this.members.filter((member) => member.child.exitCode === null && member.child.signalCode === null);
    for (const member of running) member.child.kill('SIGTERM');
    const timer = setTimeout(() => running.forEach((member) => member.child.kill('SIGKILL')), STOP_GRACE_MS);
    await Promise.all(running.map((member) => member.exited));
    clearTimeout(timer);
    closeSync(this.logFd);
  }
}
