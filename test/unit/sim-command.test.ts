/** `npm run sim` as a user runs it: its flags reach the simulation, and a bad one is named. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { SimReport } from '../../tools/sim/run-sim.ts';

const run = promisify(execFile);
const sim = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'tools/cli/main.ts', 'sim', ...args], { cwd: path.resolve(__dirname, '../..') });

describe('npm run sim', () => {
  it('runs the seeds asked for across a DST transition, without the settlement when told, and reports as it prints', async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), 'cronfence-sim-command-'));
    const { stdout } = await sim([
      '--seeds',
      '3',
      '--minutes',
      '1',
      '--profile',
      'aws',
      '--dst',
      'fall',
      '--no-settlement',
      '--json',
      '--out',
      out,
    ]);
    const printed = JSON.parse(stdout) as SimReport;
    expect(printed).toMatchObject({ seeds: { from: 3, to: 3, count: 1 }, profiles: ['aws'], dst: 'fall', settlements: 0, duplicates: 0 });
    expect(printed.expectedOccurrences).toBeGreaterThan(20);
    expect(printed.forgedMessages).toBeGreaterThan(0);
    expect(JSON.parse(await readFile(path.join(out, 'sim-report.json'), 'utf8'))).toEqual(printed);
  }, 60_000);

  it('refuses a DST transition it does not know, naming the value', async () => {
    await expect(sim(['--dst', 'winter'])).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/--dst.*winter/s) });
  }, 60_000);
});
