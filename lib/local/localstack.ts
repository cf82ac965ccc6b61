/**
 * LocalStack launcher for the CRONFENCE_EMULATOR=localstack profile.
 *
 * `startLocalStack()` makes sure the project-local venv exists
 * (scripts/setup-localstack.sh: localstack-core 4.14.0, pinned by LocalStack's
 * own lock file), starts LocalStack in host mode (no Docker) through
 * scripts/localstack/serve.py on a free loopback port, serving SQS and
 * EventBridge only, and resolves once its health endpoint reports both and a
 * real SQS ListQueues call succeeds. DynamoDB stays on our moto: LocalStack's
 * DynamoDB is Amazon's DynamoDB Local, which we neither download nor run.
 *
 * It never outlives this process (lib/local/emulator-child.ts), and its
 * FILESYSTEM_ROOT (.localstack/<pid>-<port>/, gitignored) goes with it.
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { defaultRepoRoot, EmulatorStartError, runSetupScript, spawnEmulatorChild, waitUntilAnswering } from './emulator-child.ts';

export interface LocalStackOptions {
  /** Repo root holding scripts/ and .venv-localstack/; found from this file when omitted. */
  repoRoot?: string;
  /** Receives progress lines and LocalStack's output. Silent when omitted. */
  log?: (line: string) => void;
  /** How long to wait for LocalStack to report healthy (default 60000). Excludes venv setup. */
  startTimeoutMs?: number;
}

export interface RunningLocalStack {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
// LocalStack's SIGTERM shutdown took 3-7 s here.
const STOP_GRACE_MS = 10_000;
const SERVICES = ['sqs', 'events'] as const;
const HEALTHY = new Set(['available', 'running']);

/** LocalStack's settings: loopback only, no Docker, no downloads, queue URLs on the address we reach it at. */
function localStackEnv(port: number, filesystemRoot: string): NodeJS.ProcessEnv {
  const address = `127.0.0.1:${port}`;
  return {
    ...process.env,
    PYTHONUNBUFFERED: '1',
    FILESYSTEM_ROOT: filesystemRoot,
    GATEWAY_LISTEN: address,
    // Queue URLs as http://127.0.0.1:<port>/queue/<region>/<account>/<name>: resolvable here.
    LOCALSTACK_HOST: address,
    SQS_ENDPOINT_STRATEGY: 'path',
    // Only these load; a DynamoDB request is refused instead of fetching DynamoDB Local.
    SERVICES: SERVICES.join(','),
    STRICT_SERVICE_LOADING: '1',
    EAGER_SERVICE_LOADING: '1',
    SQS_DISABLE_CLOUDWATCH_METRICS: '1',
    DISABLE_EVENTS: '1',
    SKIP_SSL_CERT_DOWNLOAD: '1',
    DNS_ADDRESS: '0',
    // One log line per request costs CPU on a 2-core machine; LS_LOG=info (or debug) in the caller's env brings them back.
    LS_LOG: process.env.LS_LOG ?? 'warn',
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new EmulatorStartError('no free port'))));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Directories left by launchers that were SIGKILLed before their 'exit' handler ran. */
function removeStaleRoots(parent: string): void {
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

async function probeHealth(endpoint: string, signal: AbortSignal): Promise<void> {
  const response = await fetch(`${endpoint}/_localstack/health`, { signal });
  if (!response.ok) throw new Error(`health answered HTTP ${response.status}`);
  const body = (await response.json()) as { services?: Record<string, string> };
  const states = SERVICES.map((service) => `${service}=${body.services?.[service] ?? 'absent'}`);
  if (!SERVICES.every((service) => HEALTHY.has(body.services?.[service] ?? ''))) throw new Error(`not ready: ${states.join(', ')}`);
}

async function waitForLocalStack(endpoint: string, deadline: number, exited: () => string | undefined): Promise<void> {
  await waitUntilAnswering(`LocalStack at ${endpoint} (/_localstack/health)`, deadline, exited, (signal) => probeHealth(endpoint, signal));
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  try {
    await waitUntilAnswering(`LocalStack at ${endpoint} (SQS ListQueues)`, deadline, exited, async (abortSignal) => {
      await sqs.send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal });
    });
  } finally {
    sqs.destroy();
  }
}

export async function startLocalStack(opts: LocalStackOptions = {}): Promise<RunningLocalStack> {
  const repoRoot = opts.repoRoot ?? defaultRepoRoot();
  const log = opts.log ?? (() => {});
  await runSetupScript(repoRoot, 'setup-localstack.sh', log);
  const python = path.join(repoRoot, '.venv-localstack', 'bin', 'python');
  if (!existsSync(python)) {
    throw new EmulatorStartError(`${python} is missing after scripts/setup-localstack.sh succeeded`);
  }
  const roots = path.join(repoRoot, '.localstack');
  removeStaleRoots(roots);
  const deadline = Date.now() + (opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  // The free port is found before LocalStack binds it, so another process can take it in between.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce({ repoRoot, python, roots, port: await freePort(), deadline, log });
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw err;
      log(`${err.message}; trying another port`);
    }
  }
}

const PORT_ATTEMPTS = 3;
// What twisted prints when GATEWAY_LISTEN's port is taken. LocalStack still says "Ready." and then
// neither serves nor exits on SIGTERM, so this is watched for rather than waited out.
const PORT_TAKEN = /CannotListenError|Address already in use/;

class PortTakenError extends EmulatorStartError {
  override name = 'PortTakenError';
}

interface StartAttempt {
  readonly repoRoot: string;
  readonly python: string;
  readonly roots: string;
  readonly port: number;
  readonly deadline: number;
  readonly log: (line: string) => void;
}

async function startOnce({ repoRoot, python, roots, port, deadline, log }: StartAttempt): Promise<RunningLocalStack> {
  const endpoint = `http://127.0.0.1:${port}`;
  const filesystemRoot = path.join(roots, `${process.pid}-${port}`);
  mkdirSync(filesystemRoot, { recursive: true });
  let portTaken = false;
  const watch = (line: string): void => {
    if (PORT_TAKEN.test(line)) portTaken = true;
    log(line);
  };
  const child = spawnEmulatorChild({
    label: 'localstack',
    command: python,
    args: [path.join(repoRoot, 'scripts', 'localstack', 'serve.py'), '--exit-on-stdin-eof'],
    cwd: repoRoot,
    env: localStackEnv(port, filesystemRoot),
    stopGraceMs: STOP_GRACE_MS,
    log: watch,
    cleanup: () => rmSync(filesystemRoot, { recursive: true, force: true }),
  });
  // Always drained: a full stdout pipe would block LocalStack.
  createInterface({ input: child.process.stdout }).on('line', (line) => {
    if (line.trim()) watch(`[localstack] ${line}`);
  });
  const gone = (): string | undefined => (portTaken ? `port ${port} was taken before LocalStack bound it` : child.describeExit());

  try {
    await waitForLocalStack(endpoint, deadline, gone);
    log(`LocalStack (sqs, events) listening on ${endpoint} (pid ${String(child.process.pid)})`);
    child.unref();
    return { endpoint, port, stop: () => child.stop() };
  } catch (err) {
    // Hung after a failed bind, it would only wait out the SIGTERM grace.
    if (portTaken) child.process.kill('SIGKILL');
    await child.stop();
    throw portTaken ? new PortTakenError(`port ${port} was taken before LocalStack bound it`, { cause: err }) : err;
  }
}
