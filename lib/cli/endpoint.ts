/**
 * Which AWS endpoint a one-shot CLI command talks to: AWS_ENDPOINT_URL when
 * set; else the emulator of a running `cronfence dev` (found through its
 * state file, with any per-service AWS_ENDPOINT_URL_* it ran with); else the
 * SDK's default, real AWS.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export function useDevEndpointIfRunning(stateDir: string): string | undefined {
  if (process.env.AWS_ENDPOINT_URL) return process.env.AWS_ENDPOINT_URL;
  const statePath = path.join(stateDir, 'dev.json');
  if (!existsSync(statePath)) return undefined;
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as { endpoint?: string; endpointEnv?: Record<string, string>; pid?: number };
  if (!state.endpoint || !isAlive(state.pid)) return undefined;
  process.env.AWS_ENDPOINT_URL = state.endpoint;
  // The per-service split of CRONFENCE_EMULATOR=localstack (DynamoDB on moto), unless set here already.
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
