/**
 * The CLI at its edges, as a user meets them: the real `bin/cronfence.mjs` in
 * a child process against the emulator. A job id with nothing behind it, a
 * reader that goes away (`| head`), pause and resume of a job already as
 * asked, `jobs get` for people and for scripts, `jobs add --catch-up` and
 * `--payload @file`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definitionOf } from '../../lib/core/job-record.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
let installation: TestInstallation;
let dir: string;
beforeAll(async () => {
  installation = await createTestInstallation();
  dir = mkdtempSync(path.join(tmpdir(), 'cronfence-cli-'));
});
afterAll(() => {
  installation?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command` in bash (so a pipeline is a real one), with the installation's environment. */
function shell(command: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: REPO_ROOT, env: installation.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const NODE = JSON.stringify(process.execPath);
const cli = (args: string): Promise<Ran> => shell(`${NODE} bin/cronfence.mjs ${args}`);

describe('cronfence CLI edges (against the emulator)', () => {
  it('runs of a job id with no job and no slices fails naming it; a job with none in the window is just empty', async () => {
    const unknown = await cli('runs nosuch');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('cronfence: no job "nosuch", and no slices of it since ');
    expect(unknown.stdout).toBe('');
    await installation.runtime.jobs().put({ id: 'cli-idle', schedule: '0 0 1 1 *', handler: 'every-minute' });
    const idle = await cli('runs cli-idle');
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('0 slices, 0 ledger records since');
  });

  it('runs piped into head: the reader leaves early, the command ends quietly with 0 (no EPIPE stack trace)', async () => {
    const { job } = await installation.runtime.jobs().put({ id: 'cli-many', schedule: '* * * * * *', handler: 'every-minute' });
    const from = Math.ceil(Date.now() / 1000) * 1000 + 3_600_000;
    // About 150 KB of JSON lines, more than a pipe's 64 KiB buffer: the command is still writing when head has gone.
    const slices = Array.from({ length: 200 }, (_, i) => ({
      jobId: job.id,
      scheduledAt: from + i * 1000,
      sweepAt: from + i * 1000 + 30_000,
    }));
    expect(await installation.runtime.slices.enqueue(definitionOf(job), slices, Date.now())).toHaveLength(200);
    const piped = await shell(
      `${NODE} bin/cronfence.mjs runs cli-many --since 1m --json | head -1; echo "cronfence exit \${PIPESTATUS[0]}" >&2`,
    );
    expect(JSON.parse(piped.stdout.trim())).toMatchObject({ jobId: 'cli-many', status: 'ENQUEUED' });
    expect(piped.stderr.trim()).toBe('cronfence exit 0');
  });

  it('pause and resume say when the job already was as asked, and change nothing', async () => {
    await installation.runtime.jobs().put({ id: 'cli-pause', schedule: '0 3 * * *', handler: 'every-minute' });
    const notPaused = await cli('jobs resume cli-pause --actor carol');
    expect([notPaused.code, notPaused.stdout]).toEqual([
      0,
      expect.stringMatching(/^cli-pause was not paused; nothing changed \(next \S+T03:00:00Z\)\n$/),
    ]);
    const paused = await cli('jobs pause cli-pause --reason "incident 42" --actor carol');
    expect(paused.stdout).toMatch(/^paused cli-pause until `cronfence jobs resume`, by carol: incident 42; 0 pending slices skipped\n$/);
    const again = await cli('jobs pause cli-pause --reason "incident 42" --actor carol');
    expect([again.code, again.stdout]).toEqual([0, 'cli-pause was already paused so (until `cronfence jobs resume`); nothing changed\n']);
    const resumed = await cli('jobs resume cli-pause --actor dave');
    expect(resumed.stdout).toMatch(/^resumed cli-pause: next \S+T03:00:00Z, by dave\n$/);
    expect((await installation.runtime.jobs().require('cli-pause')).version).toBe(3);
  });

  it('jobs add --catch-up and --payload @file; jobs get shows it readably, --json as stored', async () => {
    const payloadFile = path.join(dir, 'payload.json');
    writeFileSync(payloadFile, JSON.stringify({ merchants: 3, memo: 'it\'s "quoted"' }));
    const added = await cli(`jobs add cli-added -s "*/10 * * * *" --handler every-minute --catch-up 2h --payload @${payloadFile}`);
    expect(added.code).toBe(0);
    const stored = JSON.parse((await cli('jobs get cli-added --json')).stdout) as {
      payload: unknown;
      policies: { catchUpWindowMs: number };
      createdAt: number;
    };
    expect(stored).toMatchObject({ payload: { merchants: 3, memo: 'it\'s "quoted"' }, policies: { catchUpWindowMs: 7_200_000 } });
    const shown = await cli('jobs get cli-added');
    expect(shown.stdout).toMatch(/^catch-up window\s+2h$/m);
    expect(shown.stdout).toMatch(new RegExp(`^created\\s+${new Date(stored.createdAt).toISOString().slice(0, 19)}Z$`, 'm'));
    expect(shown.stdout).not.toMatch(/\d{13}/);
    const missing = await cli(`jobs add cli-bad -s "* * * * *" --handler every-minute --payload @${path.join(dir, 'nope.json')}`);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(`cannot read payload file ${JSON.stringify(path.join(dir, 'nope.json'))}: ENOENT`);
    expect(await installation.runtime.jobs().get('cli-bad')).toBeUndefined();
  });
});
