/**
 * Ctrl-C and SIGTERM end `cronfence dev` cleanly: the signal goes to the
 * whole process group of the command, as a terminal sends Ctrl-C (and as
 * `npm start`'s group gets it; this runs what `npm start` runs, the tools'
 * `dev` with the example jobs and the request meter). The run prints its summary, exits 0 without
 * a stack trace, and leaves no emulator or replica behind. The dev command
 * starts its own emulator here (no AWS_ENDPOINT_URL): the one the terminal's
 * signal used to kill first.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

interface Process {
  readonly pid: number;
  readonly ppid: number;
  readonly args: string;
}

function processes(): Process[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] ?? '' }));
}

/** Every process below `root`, however deep (the emulator and the replicas are in their own process groups). */
function descendants(root: number): Process[] {
  const all = processes();
  const found: Process[] = [];
  const walk = (pid: number): void => {
    for (const child of all.filter((candidate) => candidate.ppid === pid)) {
      found.push(child);
      walk(child.pid);
    }
  };
  walk(root);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('stopping cronfence dev', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s to its process group: the summary, exit 0, no stack trace, nothing left running',
    async (signal) => {
      const stateDir = mkdtempSync(path.join(tmpdir(), 'cronfence-ctrl-c-'));
      cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.startsWith('CRONFENCE_') && !name.startsWith('AWS_')),
      );
      Object.assign(env, { CRONFENCE_STATE_DIR: stateDir, CRONFENCE_PREFIX: `cc${randomUUID().slice(0, 8)}` });
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'tools/cli/main.ts', 'dev', '--duration', '60', '--scanners', '1', '--workers', '2'],
        {
          cwd: ROOT,
          env,
          detached: true, // a process group of its own, as a terminal's foreground job
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const pid = child.pid ?? 0;
      cleanups.push(() => {
        if (alive(pid)) process.kill(-pid, 'SIGKILL');
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, sig) => resolve({ code, signal: sig })),
      );

      await until(() => / committed\n/.test(stdout), 90_000, `no execution was committed (stdout:\n${stdout}\nstderr:\n${stderr})`);
      const running = descendants(pid);
      // Two moto processes: DynamoDB's, and SQS's and EventBridge's (lib/local/emulator.ts).
      expect(
        running.filter((p) => p.args.includes('serve.py')),
        'the emulators',
      ).toHaveLength(2);
      expect(
        running.filter((p) => p.args.includes('replica.ts')),
        'the replicas',
      ).toHaveLength(3);

      process.kill(-pid, signal);
      const end = await exited;
      expect(end, `stderr:\n${stderr}`).toEqual({ code: 0, signal: null });
      expect(stdout).toContain('stopping replicas…');
      expect(stdout).toMatch(/^ran \d+ s; events: \{.*"committed":\d+.*\}$/m);
      // Read from the emulator after the replicas stopped: it must still be up then.
      expect(stdout).not.toContain('jobs and ledger not read');
      expect(stdout).toMatch(/^job +committed +ledger records +duplicate keys +workers used\nevery-5-seconds +[1-9]\d* +[1-9]\d* +0 /m);
      // The replicas' request meters (tools/meter), sent as they stopped.
      expect(stdout).toMatch(
        /^AWS requests by all replicas \(scanners and workers\), per committed execution \(\d+\):\nrequest +count +per execution\ndynamo\.\w+ +\d+ /m,
      );
      expect(stderr).not.toMatch(/Error|\n\s+at /);
      await until(
        () => running.every((p) => !alive(p.pid)),
        5000,
        `left running: ${running
          .filter((p) => alive(p.pid))
          .map((p) => p.args)
          .join('; ')}`,
      );
    },
    120_000,
  );
});
