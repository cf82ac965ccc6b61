/**
 * Which AWS endpoint a one-shot CLI command talks to: AWS_ENDPOINT_URL when
 * set; else the emulator of a running `cronfence dev` (found through its
 * state file, with any per-service AWS_ENDPOINT_URL_* it ran with); else the
 * SDK's default, real AWS.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describeJobsModule } from '../package/describe-jobs-module.ts';

interface DevState {
  readonly endpoint?: string;
  /** The per-service split of CRONFENCE_EMULATOR=localstack (DynamoDB on moto). */
  readonly endpointEnv?: Record<string, string>;
  readonly pid?: number;
  readonly prefix?: string;
  /** The jobs module a `cronfence dev --jobs` runs. */
  readonly jobsModule?: string;
}

/** The state file of a `cronfence dev` that is still running. */
function runningDev(stateDir: string): DevState | undefined {
  const statePath = path.join(stateDir, 'dev.json');
  if (!existsSync(statePath)) return undefined;
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as DevState;
  return isAlive(state.pid) ? state : undefined;
}

/** The handler names of the module a running `cronfence dev --jobs` runs, if one does. */
export function devJobsModuleHandlers(stateDir: string): readonly string[] | undefined {
  const module = runningDev(stateDir)?.jobsModule;
  return module === undefined ? undefined : describeJobsModule(module).handlers;
}

export function useDevEndpointIfRunning(stateDir: string): string | undefined {
  if (process.env.AWS_ENDPOINT_URL) return process.env.AWS_ENDPOINT_URL;
  const state = runningDev(stateDir);
  if (!state?.endpoint) return undefined;
  process.env.AWS_ENDPOINT_URL = state.endpoint;
  for (const [name, value] of Object.entries(state.endpointEnv ?? {})) {
    if (name.startsWith('AWS_ENDPOINT_URL_')) process.env[name] ??= value;
  }
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'test';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
  return state.endpoint;
}

function isAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
