/**
 * Local AWS emulator (moto) launcher.
 *
 * `startEmulator()` makes sure the project-local venv exists
 * (scripts/setup-emulator.sh), spawns scripts/emulator/serve.py on a free
 * port, and resolves once a real DynamoDB ListTables call succeeds.
 * `ensureAwsEndpoint()` does that only when AWS_ENDPOINT_URL is not set, and
 * exports the endpoint/region/credentials into process.env so that child
 * processes (and the AWS SDK's default config chain) pick them up.
 *
 * The emulator never outlives this process: stop() terminates it, a process
 * 'exit' handler kills it synchronously, and serve.py exits by itself when
 * its stdin pipe closes (which covers this process being SIGKILLed).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';

export class EmulatorSetupError extends Error {
  override name = 'EmulatorSetupError';
}

export class EmulatorStartError extends Error {
  override name = 'EmulatorStartError';
}

export interface EmulatorOptions {
  /** Repo root holding scripts/ and .venv-emulator/; found from this file when omitted. */
  repoRoot?: string;
  /** Receives progress lines and the emulator's stderr lines. Silent when omitted. */
  log?: (line: string) => void;
  /** How long to wait for the emulator to answer ListTables (default 60000). Excludes venv setup. */
  startTimeoutMs?: number;
}

export interface RunningEmulator {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export interface AwsEndpoint {
  /** The endpoint in use (AWS_ENDPOINT_URL as found, or the started emulator's). */
  endpoint: string | undefined;
  /** Stops the emulator if this call started it; otherwise a no-op. */
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 3_000;
const STDERR_TAIL_LINES = 40;

function defaultRepoRoot(): string {
  // This file is lib/runtime/emulator.ts.
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
}

function runSetup(repoRoot: string, log: (line: string) => void): Promise<void> {
  const script = path.join(repoRoot, 'scripts', 'setup-emulator.sh');
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn('bash', [script], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Captured; shown only on failure (in the error) or through opts.log.
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface ReadyLine {
  port: number;
  endpoint: string;
}

function parseReadyLine(line: string): ReadyLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { ready, port, endpoint } = value as Record<string, unknown>;
  if (ready !== true || typeof port !== 'number' || typeof endpoint !== 'string') return undefined;
  return { port, endpoint };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function waitForDynamoDb(endpoint: string, deadline: number, exited: () => string | undefined): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  let lastError: unknown;
  try {
    for (;;) {
      const why = exited();
      if (why !== undefined) throw new EmulatorStartError(why);
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }), {
          abortSignal: AbortSignal.timeout(Math.max(1, Math.min(5_000, remaining))),
        });
        return;
      } catch (err) {
        lastError = err;
      }
      await sleep(100);
    }
  } finally {
    client.destroy();
  }
  throw new EmulatorStartError(
    `emulator at ${endpoint} did not answer DynamoDB ListTables in time (last error: ${errorMessage(lastError)})`,
    { cause: lastError },
  );
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const repoRoot = opts.repoRoot ?? defaultRepoRoot();
  const log = opts.log ?? (() => {});
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;

  await runSetup(repoRoot, log);

  const python = path.join(repoRoot, '.venv-emulator', 'bin', 'python');
  const serve = path.join(repoRoot, 'scripts', 'emulator', 'serve.py');
  if (!existsSync(python)) {
    throw new EmulatorStartError(`${python} is missing after scripts/setup-emulator.sh succeeded`);
  }

  const deadline = Date.now() + startTimeoutMs;
  // stdin stays an open pipe for the child's whole life: serve.py exits when it
  // reaches EOF, i.e. when this process dies, however it dies.
  const child = spawn(python, [serve, '--port', '0', '--exit-on-stdin-eof'], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    // Its own process group: a terminal's Ctrl-C must not stop it before its parent has finished with it (stop() does).
    detached: true,
  });

  const stderrTail: string[] = [];
  let exitInfo: string | undefined;
  let spawnError: Error | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
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

  const killOnExit = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  const describeExit = (): string | undefined => {
    if (spawnError) return `cannot spawn ${python}: ${spawnError.message}`;
    if (exitInfo === undefined) return undefined;
    const tail = stderrTail.join('\n').trim();
    return `emulator ${exitInfo} before it was ready${tail ? `:\n${tail}` : ''}`;
  };

  createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
    log(`[emulator] ${line}`);
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        // Unreferenced while running; a caller awaiting stop() must not see Node exit first (exit code 13).
        child.ref();
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
        }, STOP_GRACE_MS);
        await exitedPromise;
        clearTimeout(timer);
      }
      child.stdin.destroy();
      process.off('exit', killOnExit);
    })();
    return stopping;
  };

  try {
    const ready = await new Promise<ReadyLine>((resolve, reject) => {
      const stdoutLines = createInterface({ input: child.stdout });
      const timer = setTimeout(
        () => reject(new EmulatorStartError(`emulator printed no ready line within ${startTimeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      const fail = (): void => {
        clearTimeout(timer);
        reject(new EmulatorStartError(describeExit() ?? 'emulator exited before it was ready'));
      };
      void exitedPromise.then(fail);
      stdoutLines.on('line', (line) => {
        const parsed = parseReadyLine(line);
        if (parsed) {
          clearTimeout(timer);
          resolve(parsed);
        } else {
          log(`[emulator] ${line}`);
        }
      });
    });

    log(`emulator listening on ${ready.endpoint} (pid ${String(child.pid)})`);
    await waitForDynamoDb(ready.endpoint, deadline, describeExit);

    // The emulator must not by itself keep this process alive; the 'exit'
    // handler and the stdin watchdog clean it up when we go.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      (stream as unknown as { unref?: () => void }).unref?.();
    }

    return { endpoint: ready.endpoint, port: ready.port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const ENV_DEFAULTS = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
} as const;

export async function ensureAwsEndpoint(opts: EmulatorOptions = {}): Promise<AwsEndpoint> {
  const existing = process.env.AWS_ENDPOINT_URL;
  if (existing) {
    return { endpoint: existing, stop: async () => {} };
  }

  const emulator = await startEmulator(opts);
  const setByUs: Record<string, string> = { AWS_ENDPOINT_URL: emulator.endpoint };
  for (const [name, value] of Object.entries(ENV_DEFAULTS)) {
    if (!process.env[name]) setByUs[name] = value;
  }
  Object.assign(process.env, setByUs);

  return {
    endpoint: emulator.endpoint,
    stop: async () => {
      await emulator.stop();
      // Undo what we exported, unless someone changed it since.
      for (const [name, value] of Object.entries(setByUs)) {
        if (process.env[name] === value) delete process.env[name];
      }
    },
  };
}
