/**
 * What the moto and LocalStack launchers share: running a venv setup script,
 * and an emulator child process that never outlives this one.
 *
 * The child gets an open stdin pipe for its whole life and exits by itself
 * when it reads EOF (both serve.py wrappers watch for it), which covers this
 * process being SIGKILLed; a process 'exit' handler SIGKILLs it
 * synchronously; stop() sends SIGTERM and SIGKILLs after a grace period.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PACKAGE_ROOT } from '../package/package-files.ts';

export class EmulatorSetupError extends Error {
  override name = 'EmulatorSetupError';
}

export class EmulatorStartError extends Error {
  override name = 'EmulatorStartError';
}

const STDERR_TAIL_LINES = 40;

/** The package root (the repository, or node_modules/cronfence: from the sources and from either build). */
export function defaultRepoRoot(): string {
  return PACKAGE_ROOT;
}

/** Runs scripts/<name> (an idempotent venv setup); output is shown only on failure or through `log`. */
export function runSetupScript(repoRoot: string, name: string, log: (line: string) => void): Promise<void> {
  const script = path.join(repoRoot, 'scripts', name);
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn('bash', [script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      createInterface({ input: stream }).on('line', (line) => {
        log(`[setup] ${line}`);
      });
    }
    child.on('error', (err) => {
      reject(new EmulatorSetupError(`cannot run ${script}: ${err.message}`, { cause: err }));
    });
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve();
        return;
      }
      const how = signal ? `was killed by ${signal}` : `exited with code ${String(code)}`;
      const text = output.trim();
      reject(new EmulatorSetupError(text ? `${text}\n(${script} ${how})` : `${script} ${how}`));
    });
  });
}

export interface ChildSpec {
  /** Names the child in messages ("emulator", "localstack"). */
  readonly label: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** SIGTERM to SIGKILL. */
  readonly stopGraceMs: number;
  readonly log: (line: string) => void;
  /** Extra synchronous cleanup after the child is gone (also run from the 'exit' handler). */
  readonly cleanup?: () => void;
}

export interface EmulatorChild {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves when the child has exited (or failed to spawn). */
  readonly exited: Promise<void>;
  /** Why the child is gone, with its stderr tail; undefined while it runs. */
  describeExit(): string | undefined;
  /** Once ready: the child must not by itself keep this process alive. */
  unref(): void;
  stop(): Promise<void>;
}

export function spawnEmulatorChild(spec: ChildSpec): EmulatorChild {
  const child = spawn(spec.command, [...spec.args], {
    cwd: spec.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: spec.env,
    // Its own process group: a terminal's Ctrl-C must not stop it before its parent has finished with it (stop() does).
    detached: true,
  });
  const stderrTail: string[] = [];
  let exitInfo: string | undefined;
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exitInfo = signal ? `killed by ${signal}` : `exited with code ${String(code)}`;
      resolve();
    });
    child.on('error', (err) => {
      // Only a failed spawn ends the child's life here; it emits no 'exit'.
      if (child.pid === undefined) {
        spawnError = err;
        resolve();
      }
    });
  });
  // Writing to the pipe after the child died must not crash us.
  child.stdin.on('error', () => {});
  const running = (): boolean => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

  const killOnExit = (): void => {
    if (running()) child.kill('SIGKILL');
    spec.cleanup?.();
  };
  process.on('exit', killOnExit);

  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    spec.log(`[${spec.label}] ${line}`);
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (running()) {
        // Unreferenced while running; a caller awaiting stop() must not see Node exit first (exit code 13).
        child.ref();
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), spec.stopGraceMs);
        await exited;
        clearTimeout(timer);
      }
      child.stdin.destroy();
      process.off('exit', killOnExit);
      spec.cleanup?.();
    })();
    return stopping;
  };

  return {
    process: child,
    exited,
    describeExit() {
      if (spawnError) return `cannot spawn ${spec.command}: ${spawnError.message}`;
      if (exitInfo === undefined) return undefined;
      const tail = stderrTail.join('\n').trim();
      return `${spec.label} ${exitInfo} before it was ready${tail ? `:\n${tail}` : ''}`;
    },
    unref() {
      // The 'exit' handler and the stdin watchdog clean up when we go.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) {
        (stream as unknown as { unref?: () => void }).unref?.();
      }
    },
    stop,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Retries `probe` every 100 ms until it resolves, the child exits, or the deadline passes. */
export async function waitUntilAnswering(
  what: string,
  deadline: number,
  exited: () => string | undefined,
  probe: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  let lastError: unknown;
  for (;;) {
    const why = exited();
    if (why !== undefined) throw new EmulatorStartError(why);
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      await probe(AbortSignal.timeout(Math.max(1, Math.min(5_000, remaining))));
      return;
    } catch (err) {
      lastError = err;
    }
    await sleep(100);
  }
  throw new EmulatorStartError(`${what} did not answer in time (last error: ${errorMessage(lastError)})`, { cause: lastError });
}
