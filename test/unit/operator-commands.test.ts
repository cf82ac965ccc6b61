/**
 * `cronfence jobs trigger|backfill|pause|resume` flag handling: what each
 * command asks of OperatorActions (a recording stand-in; the actions
 * themselves are tested against the emulator in
 * test/integration/operator-actions.test.ts), who it records as the actor,
 * and bad flags refused with the flag and value named before any action.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { OperatorActions } from '../../lib/aws/operator-actions.ts';
import { addOperatorCommands } from '../../lib/cli/operator-commands.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';

const NOW = Date.parse('2026-12-01T13:00:00Z');
const JOB: StoredJob = {
  ...parseJobSpec({ id: 'nightly', schedule: '0 2 * * *', handler: 'h' }),
  shard: 0,
  nextFireAt: NOW,
  version: 1,
  generation: 1,
  createdAt: 0,
  updatedAt: 0,
};

interface Results {
  /** What pause and resume report: by default, each changed the job. */
  readonly pauseChanged?: boolean;
  readonly resumeChanged?: boolean;
}

async function run(
  args: string[],
  env: Record<string, string> = { USER: 'carol' },
  results: Results = {},
): Promise<{ calls: [string, ...unknown[]][]; lines: string[] }> {
  const calls: [string, ...unknown[]][] = [];
  const lines: string[] = [];
  const record =
    (name: string, result: unknown) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return result;
    };
  const pauseResult = {
    job: { ...JOB, enabled: false, pause: { actor: 'x', reason: 'r', at: NOW } },
    skipped: 0,
    changed: results.pauseChanged ?? true,
  };
  const resumeResult =
    results.resumeChanged === false
      ? { job: JOB, skipped: 0, changed: false }
      : { job: { ...JOB, resumed: { actor: 'carol', at: NOW } }, skipped: 0, changed: true };
  const operator = {
    trigger: record('trigger', {
      created: true,
      key: { jobId: 'nightly', scheduledAt: NOW + 417 },
      executionKey: 'nightly:2026-12-01T13:00:00.417Z',
      status: 'ENQUEUED',
    }),
    backfill: record('backfill', { total: 3, done: 3, created: 3, existing: 0, alreadyFinal: 0, alreadyLive: 0 }),
    pause: record('pause', pauseResult),
    pauseGroup: record('pauseGroup', [pauseResult, pauseResult]),
    resume: record('resume', resumeResult),
    resumeGroup: record('resumeGroup', [resumeResult, { job: JOB, skipped: 0, changed: false }]),
  } as unknown as OperatorActions;
  const jobs = new Command('jobs').exitOverride();
  addOperatorCommands(
    jobs,
    () => operator,
    (line) => lines.push(line),
    { env, now: () => NOW },
  );
  process.exitCode = undefined;
  await jobs.parseAsync(args, { from: 'user' });
  return { calls, lines };
}

describe('operator commands', () => {
  it('trigger: passes the payload text, the request id, the reason and the actor from USER', async () => {
    const { calls, lines } = await run(['trigger', 'nightly', '--payload', '{"a":1}', '--request-id', 'r-1', '--reason', 'why']);
    expect(calls).toEqual([['trigger', 'nightly', { actor: 'carol', reason: 'why', requestId: 'r-1', payload: '{"a":1}' }]]);
    expect(lines[0]).toContain('execution key nightly:2026-12-01T13:00:00.417Z, request id r-1');
  });

  it('the actor: --actor, else CRONFENCE_ACTOR, else USER', async () => {
    expect(
      (await run(['trigger', 'nightly', '--actor', 'dave'], { USER: 'carol', CRONFENCE_ACTOR: 'ops-bot' })).calls[0]?.[2],
    ).toMatchObject({ actor: 'dave' });
    expect((await run(['trigger', 'nightly'], { USER: 'carol', CRONFENCE_ACTOR: 'ops-bot' })).calls[0]?.[2]).toMatchObject({
      actor: 'ops-bot',
    });
  });

  it('trigger without --request-id makes one and prints it', async () => {
    const { calls, lines } = await run(['trigger', 'nightly']);
    const requestId = (calls[0]?.[2] as { requestId: string }).requestId;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[0]).toContain(`--request-id ${requestId}`);
  });

  it('backfill: durations ago and ISO times, and the rate', async () => {
    const { calls } = await run(['backfill', 'nightly', '--from', '2h', '--to', '2026-12-01T12:30:00Z', '--rate', '30/m']);
    expect(calls[0]?.slice(0, 2)).toEqual(['backfill', 'nightly']);
    expect(calls[0]?.[2]).toMatchObject({
      from: NOW - 7_200_000,
      to: Date.parse('2026-12-01T12:30:00Z'),
      ratePerSecond: 0.5,
      actor: 'carol',
    });
  });

  it('pause --until takes a duration ahead; --group pauses the group', async () => {
    expect((await run(['pause', 'nightly', '--reason', 'r', '--until', '30m'])).calls).toEqual([
      ['pause', 'nightly', { actor: 'carol', reason: 'r', until: NOW + 1_800_000 }],
    ]);
    const group = await run(['pause', '--group', 'payments', '--reason', 'r']);
    expect(group.calls).toEqual([['pauseGroup', 'payments', { actor: 'carol', reason: 'r' }]]);
    expect(group.lines.at(-1)).toBe('paused 2 jobs of group payments');
  });

  it('refuses bad flags naming the flag and the value', async () => {
    await expect(run(['backfill', 'nightly', '--from', 'yesterday', '--to', '1m'])).rejects.toThrow(
      'invalid --from "yesterday": must be an ISO 8601 time with a zone',
    );
    await expect(run(['backfill', 'nightly', '--from', '2h', '--to', '2026-12-01T12:00:00'])).rejects.toThrow(
      'invalid --to "2026-12-01T12:00:00"',
    );
    await expect(run(['backfill', 'nightly', '--from', '2h', '--to', '1m', '--rate', 'fast'])).rejects.toThrow('invalid rate "fast"');
    await expect(run(['pause', 'nightly', '--reason', 'r', '--until', 'soon'])).rejects.toThrow('invalid --until "soon"');
    await expect(run(['pause', 'nightly', '--group', 'g', '--reason', 'r'])).rejects.toThrow('give a job id or --group, not both');
    await expect(run(['resume'])).rejects.toThrow('give a job id or --group <name>');
  });

  it('resume says so when the job was not paused (nothing changed, exit code 0); when it was, that it resumed and who', async () => {
    const resumed = await run(['resume', 'nightly']);
    expect(resumed.lines).toEqual([expect.stringMatching(/^resumed nightly: next \d{4}-\d\d-\d\dT02:00:00Z, by carol$/)]);
    const notPaused = await run(['resume', 'nightly'], undefined, { resumeChanged: false });
    expect(notPaused.lines).toEqual([
      expect.stringMatching(/^nightly was not paused; nothing changed \(next \d{4}-\d\d-\d\dT02:00:00Z\)$/),
    ]);
    expect(process.exitCode ?? 0).toBe(0);
    const group = await run(['resume', '--group', 'payments']);
    expect(group.lines.at(-1)).toBe('resumed 1 jobs of group payments; 1 not paused, left as they were');
  });

  it('pause of a job already paused the same way says so and changes nothing', async () => {
    const again = await run(['pause', 'nightly', '--reason', 'r'], undefined, { pauseChanged: false });
    expect(again.lines).toEqual(['nightly was already paused so (until `cronfence jobs resume`); nothing changed']);
    expect(process.exitCode ?? 0).toBe(0);
  });
});
