/**
 * `cronfence jobs add --jobs <module>`: the handler is checked against the
 * module's exports (read as synth reads them), against the emulator's real
 * job repository; without --jobs, against the caller's default list.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsCommand } from '../../lib/cli/jobs-command.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

const JOBS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'settle-jobs.ts');
let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

async function add(args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const command = jobsCommand(
    (known) => installation.runtime.jobs(known ?? ['every-minute']),
    (line) => lines.push(line),
  );
  await command.parseAsync(['add', ...args], { from: 'user' });
  return lines;
}

describe('cronfence jobs add --jobs', () => {
  it('accepts a handler the module exports', async () => {
    const lines = await add(['nightly', '-s', '0 2 * * *', '--handler', 'settle', '--jobs', JOBS]);
    expect(lines[0]).toMatch(/^created nightly: "0 2 \* \* \*" in UTC .*handler settle/);
    expect((await installation.runtime.jobs().require('nightly')).handler).toBe('settle');
  });

  it('refuses one it does not, naming the module’s handlers, and writes nothing', async () => {
    await expect(add(['weekly', '-s', '0 2 * * 1', '--handler', 'every-minute', '--jobs', JOBS])).rejects.toThrow(
      new InvalidJobSpecError('handler', 'every-minute', 'no handler of that name is registered (known: failing, settle, slow)'),
    );
    expect(await installation.runtime.jobs().get('weekly')).toBeUndefined();
  });

  it('without --jobs checks against the default list', async () => {
    await expect(add(['monthly', '-s', '0 2 1 * *', '--handler', 'settle'])).rejects.toThrow(/known: every-minute/);
    expect((await add(['minutely', '-s', '* * * * *', '--handler', 'every-minute']))[0]).toMatch(/^created minutely/);
  });
});
