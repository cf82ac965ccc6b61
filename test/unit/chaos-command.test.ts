/**
 * `npm run chaos` refuses settings under which its checks cannot hold, naming the flag and the value, before it
 * starts anything (a 5 s drill reported the one-time policy jobs as broken: they fire 25 s in).
 */
import { describe, expect, it } from 'vitest';
import { chaosCommand } from '../../tools/cli/chaos-command.ts';
import { refusalOf } from '../support/cli-refusal.ts';

const refusal = (...args: string[]): Promise<string> =>
  refusalOf(
    chaosCommand(() => {}),
    args,
  );

describe('npm run chaos: bad settings', () => {
  it('refuses a window too short for the one-time policy jobs, and for the settlement', async () => {
    expect(await refusal('--duration', '5')).toContain("option '--duration <seconds>' argument '5' is invalid. 5 is below 30");
    expect(await refusal('--settlement', '--duration', '40')).toContain("option '--duration' 40 is below 60 with --settlement");
  });

  it('refuses a fleet with no standby, no scanner or no jobs', async () => {
    expect(await refusal('--workers', '1')).toContain('1 is below 2: a failover needs a standby');
    expect(await refusal('--scanners', '0')).toContain('0 is below 1');
    expect(await refusal('--jobs', '0')).toContain('0 is below 1');
    expect(await refusal('--jobs', 'many')).toContain('"many" is not a whole number');
  });
});
