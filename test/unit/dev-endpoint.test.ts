/**
 * A one-shot command run beside `cronfence dev` uses dev's endpoints,
 * including the per-service split of CRONFENCE_EMULATOR=localstack: without
 * AWS_ENDPOINT_URL_DYNAMODB, `cronfence runs` sent DynamoDB to LocalStack,
 * which refuses it ("Service 'dynamodb' is not enabled").
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useDevEndpointIfRunning } from '../../lib/cli/endpoint.ts';

const NAMES = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_SQS'] as const;
let saved: Record<string, string | undefined>;
let stateDir: string;

beforeEach(() => {
  saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
  for (const name of NAMES) delete process.env[name];
  stateDir = mkdtempSync(path.join(tmpdir(), 'cronfence-dev-state-'));
});

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  rmSync(stateDir, { recursive: true, force: true });
});

function writeState(state: object): void {
  writeFileSync(path.join(stateDir, 'dev.json'), JSON.stringify({ pid: process.pid, prefix: 'cronfence', ...state }));
}

describe('useDevEndpointIfRunning', () => {
  it("takes a running dev's per-service endpoints along with AWS_ENDPOINT_URL", () => {
    writeState({
      endpoint: 'http://127.0.0.1:4566',
      endpointEnv: { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:5000' },
    });
    expect(useDevEndpointIfRunning(stateDir)).toBe('http://127.0.0.1:4566');
    expect(process.env.AWS_ENDPOINT_URL).toBe('http://127.0.0.1:4566');
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe('http://127.0.0.1:5000');
  });

  it('keeps a per-service endpoint the caller set, and reads state files written before the split', () => {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = 'http://127.0.0.1:6000';
    writeState({
      endpoint: 'http://127.0.0.1:4566',
      endpointEnv: { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:5000', AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4567' },
    });
    useDevEndpointIfRunning(stateDir);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe('http://127.0.0.1:6000');
    expect(process.env.AWS_ENDPOINT_URL_SQS).toBe('http://127.0.0.1:4567');

    delete process.env.AWS_ENDPOINT_URL;
    delete process.env.AWS_ENDPOINT_URL_SQS;
    writeState({ endpoint: 'http://127.0.0.1:7000' });
    expect(useDevEndpointIfRunning(stateDir)).toBe('http://127.0.0.1:7000');
    expect(process.env.AWS_ENDPOINT_URL_SQS).toBeUndefined();
  });
});
