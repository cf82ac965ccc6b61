/**
 * Local AWS emulator launcher.
 *
 * `startEmulator()` makes sure the project-local moto venv exists
 * (scripts/setup-emulator.sh), spawns scripts/emulator/serve.py on a free
 * port, and resolves once a real DynamoDB ListTables call succeeds.
 *
 * `ensureAwsEndpoint()` starts emulators only when AWS_ENDPOINT_URL is not
 * set, and exports the endpoints, region and test credentials into
 * process.env so that child processes (and the AWS SDK's default config
 * chain) pick them up. Our serialized moto serves DynamoDB, in a process of
 * its own, as AWS_ENDPOINT_URL_DYNAMODB; SQS and EventBridge are
 * AWS_ENDPOINT_URL, served by CRONFENCE_EMULATOR's choice:
 * - `moto` (the default): a second moto process.
 * - `localstack`: LocalStack (host mode, lib/local/localstack.ts).
 *   LocalStack's DynamoDB is Amazon's DynamoDB Local, which we do not use.
 *   See docs/localstack.md.
 *
 * No emulator outlives this process (lib/local/emulator-child.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import {
  defaultRepoRoot,
  EmulatorSetupError,
  EmulatorStartError,
  runSetupScript,
  spawnEmulatorChild,
  waitUntilAnswering,
} from './emulator-child.ts';
import { localConfig } from '../aws/config.ts';
import { startLocalStack } from './localstack.ts';

export { EmulatorSetupError, EmulatorStartError };

/** CRONFENCE_EMULATOR names neither profile. A setup error, so the CLI reports it in one line. */
export class EmulatorProfileError extends EmulatorSetupError {
  override name = 'EmulatorProfileError';
}

export const EMULATOR_PROFILES = ['moto', 'localstack'] as const;
export type EmulatorProfile = (typeof EMULATOR_PROFILES)[number];

export interface EmulatorOptions {
  /** Repo root holding scripts/ and the venvs; found from this file when omitted. */
  repoRoot?: string;
  /** Receives progress lines and the emulators' stderr lines. Silent when omitted. */
  log?: (line: string) => void;
  /** How long to wait for an emulator to answer (default 60000). Excludes venv setup. */
  startTimeoutMs?: number;
}

export interface RunningEmulator {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export interface AwsEndpoint {
  /** AWS_ENDPOINT_URL in use (as found, or the started emulator's). */
  endpoint: string | undefined;
  /** Every AWS_ENDPOINT_URL* variable in effect, for anyone who must hand the same split on. */
  endpointEnv: Record<string, string>;
  /** Stops the emulators this call started; otherwise a no-op. */
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 3_000;

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

async function waitForDynamoDb(endpoint: string, deadline: number, exited: () => string | undefined): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  try {
    await waitUntilAnswering(`emulator at ${endpoint} (DynamoDB ListTables)`, deadline, exited, async (abortSignal) => {
      await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal });
    });
  } finally {
    client.destroy();
  }
}

/** Starts our serialized moto (all services). */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const repoRoot = opts.repoRoot ?? defaultRepoRoot();
  const log = opts.log ?? (() => {});
  const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;

  await runSetupScript(repoRoot, 'setup-emulator.sh', log);

  const python = path.join(repoRoot, '.venv-emulator', 'bin', 'python');
  const serve = path.join(repoRoot, 'scripts', 'emulator', 'serve.py');
  if (!existsSync(python)) {
    throw new EmulatorStartError(`${python} is missing after scripts/setup-emulator.sh succeeded`);
  }

  const deadline = Date.now() + startTimeoutMs;
  const child = spawnEmulatorChild({
    label: 'emulator',
    command: python,
    args: [serve, '--port', '0', '--exit-on-stdin-eof'],
    cwd: repoRoot,
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stopGraceMs: STOP_GRACE_MS,
    log,
  });

  try {
    const ready = await new Promise<ReadyLine>((resolve, reject) => {
      const stdoutLines = createInterface({ input: child.process.stdout });
      const timer = setTimeout(
        () => reject(new EmulatorStartError(`emulator printed no ready line within ${startTimeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      void child.exited.then(() => {
        clearTimeout(timer);
        reject(new EmulatorStartError(child.describeExit() ?? 'emulator exited before it was ready'));
      });
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

    log(`emulator (moto) listening on ${ready.endpoint} (pid ${String(child.process.pid)})`);
    await waitForDynamoDb(ready.endpoint, deadline, () => child.describeExit());
    child.unref();
    return { endpoint: ready.endpoint, port: ready.port, stop: () => child.stop() };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/** The profile CRONFENCE_EMULATOR names (moto when unset). @throws EmulatorProfileError for any other value. */
export function emulatorProfile(value: string | undefined): EmulatorProfile {
  if (value === undefined || value === '') return 'moto';
  const profile = EMULATOR_PROFILES.find((name) => name === value);
  if (!profile) {
    throw new EmulatorProfileError(
      `CRONFENCE_EMULATOR=${value} is not a profile; use one of ${EMULATOR_PROFILES.join(', ')} (or unset it for moto)`,
    );
  }
  return profile;
}

const ENV_DEFAULTS = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
} as const;

function endpointVariables(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('AWS_ENDPOINT_URL') && entry[1] !== undefined && entry[1] !== '',
    ),
  );
}

/**
 * Starts what the profile needs; the returned endpoints become process.env.
 * DynamoDB always has a moto process of its own (AWS_ENDPOINT_URL_DYNAMODB),
 * beside the one that serves SQS and EventBridge (AWS_ENDPOINT_URL): moto or
 * LocalStack. One Python process is held to about one core by its GIL: in one
 * process SQS's requests (a holder's visibility extensions among them) shared
 * that core with DynamoDB's, which a drill can saturate on a slow machine.
 */
async function startProfile(
  profile: EmulatorProfile,
  opts: EmulatorOptions,
): Promise<{ env: Record<string, string>; stops: (() => Promise<void>)[] }> {
  // Started side by side (LocalStack takes a few seconds); a failure of one stops the other.
  const ownDynamo = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const startQueuesAndEvents = profile === 'moto' ? startEmulator : startLocalStack;
  const started = await Promise.allSettled([startQueuesAndEvents(opts), ownDynamo ? Promise.resolve(undefined) : startEmulator(opts)]);
  const stops = started.flatMap((result) => (result.status === 'fulfilled' && result.value ? [result.value.stop] : []));
  const failed = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.all(stops.map((stop) => stop()));
    throw failed.reason;
  }
  const [queuesAndEvents, dynamo] = started.map((result) => (result as PromiseFulfilledResult<RunningEmulator | undefined>).value);
  const env: Record<string, string> = { AWS_ENDPOINT_URL: queuesAndEvents!.endpoint };
  if (dynamo) env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  return { env, stops };
}

export async function ensureAwsEndpoint(opts: EmulatorOptions = {}): Promise<AwsEndpoint> {
  const existing = process.env.AWS_ENDPOINT_URL;
  if (existing) {
    return { endpoint: existing, endpointEnv: endpointVariables(), stop: async () => {} };
  }

  const { env, stops } = await startProfile(emulatorProfile(localConfig().emulator), opts);
  const setByUs: Record<string, string> = { ...env };
  for (const [name, value] of Object.entries(ENV_DEFAULTS)) {
    if (!process.env[name]) setByUs[name] = value;
  }
  Object.assign(process.env, setByUs);

  return {
    endpoint: env.AWS_ENDPOINT_URL,
    endpointEnv: endpointVariables(),
    stop: async () => {
      await Promise.all(stops.map((stop) => stop()));
      // Undo what we exported, unless someone changed it since.
      for (const [name, value] of Object.entries(setByUs)) {
        if (process.env[name] === value) delete process.env[name];
      }
    },
  };
}
