/**
 * `cronfence dev` refuses a fleet or timing under which nothing would run, naming the flag and the value, before
 * it starts anything (`--scanners 0` and `--workers -1` ran for their whole duration with nothing committed).
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { devCommand } from '../../lib/cli/dev-command.ts';
import { DevJobsMissingError } from '../../lib/local/dev.ts';
import { refusalOf } from '../support/cli-refusal.ts';

const refusal = (...args: string[]): Promise<string> =>
  refusalOf(
    devCommand(() => {}, '/nonexistent-state-dir'),
    args,
  );

describe('cronfence dev: bad settings', () => {
  it('refuses no scanner, no worker, a zero tick or duration, and a value that is not a whole number', async () => {
    expect(await refusal('--scanners', '0')).toContain(
      "option '--scanners <n>' argument '0' is invalid. 0 is below 1: nothing would create slices",
    );
    expect(await refusal('--workers', '-1')).toContain(
      "option '--workers <n>' argument '-1' is invalid. -1 is below 1: nothing would run the jobs",
    );
    expect(await refusal('--tick', '0')).toContain("option '--tick <seconds>' argument '0' is invalid. 0 is below 1");
    expect(await refusal('--duration', '0')).toContain("option '--duration <seconds>' argument '0' is invalid. 0 is below 1");
    expect(await refusal('--workers', 'three')).toContain('"three" is not a whole number');
  });

  it('refuses --schedule without --jobs (it was ignored, a bad cron unchecked), naming the option and the value', async () => {
    expect(await refusal('--schedule', '0 25 * * *')).toContain(`option '--schedule <cron>' "0 25 * * *" needs --jobs`);
  });

  it('the published command refuses to run without --jobs (the package holds no example jobs), naming the flag, writing nothing', async () => {
    const stateDir = path.join(mkdtempSync(path.join(tmpdir(), 'cronfence-dev-')), 'state');
    const lines: string[] = [];
    const command = devCommand((line) => lines.push(line), stateDir).exitOverride();
    const run = command.parseAsync(['--duration', '5'], { from: 'user' });
    await expect(run).rejects.toThrow(DevJobsMissingError);
    await expect(run).rejects.toThrow('dev needs --jobs <module>');
    expect(lines).toEqual([]);
    expect(existsSync(stateDir)).toBe(false);
  });
});
