/**
 * A drill whose own requests cannot be answered ends with one typed error that
 * names its phase and cause (the CLI prints it in one line), not with the SDK's
 * stack trace: on a slow machine `npm run chaos -- --seed 91` ended so a second
 * into its window.
 */
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DrillAbortedError } from '../../tools/chaos/drill-aborted.ts';
import { runDrill } from '../../tools/chaos/drill.ts';

const NAMES = ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_DYNAMODB'] as const;
const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));

afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a drill that cannot reach its stores', () => {
  it('stops with DrillAbortedError naming the phase, the cause and the replicas log', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    for (const name of NAMES) process.env[name] = endpoint;
    const outDir = mkdtempSync(path.join(tmpdir(), 'cronfence-drill-aborted-'));
    const drill = runDrill({ scanners: 1, workers: 1, jobs: 1, durationSeconds: 30, seed: 1, faults: [], settlement: false, outDir });
    const error = await drill.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DrillAbortedError);
    const aborted = error as DrillAbortedError;
    expect(aborted.phase).toBe('starting');
    expect(aborted.message).toContain('the drill stopped in its starting phase, without a verdict');
    expect(aborted.message).toMatch(/ECONNREFUSED/);
    expect(aborted.message).toContain(path.join(outDir, 'replicas.log'));
  }, 30_000);
});
