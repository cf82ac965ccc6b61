import { describe, expect, it } from 'vitest';
import type { JobRepository } from '../../lib/aws/dynamo/job-repository.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/ports.ts';
import { jobsCommand } from '../../lib/cli/jobs-command.ts';

/** A repository that validates like the real one and keeps what it was given. */
function recordingRepository(inputs: unknown[]): JobRepository {
  return {
    put: async (input: unknown) => {
      inputs.push(input);
      const spec = parseJobSpec(input);
      const job: StoredJob = { ...spec, shard: 0, nextFireAt: Date.parse('2026-03-09T06:30:00Z'), version: 1, generation: 1, createdAt: 0, updatedAt: 0 };
      return { job, created: true, skipped: 0 };
    },
  } as unknown as JobRepository;
}

async function add(args: string[]): Promise<{ inputs: unknown[]; lines: string[] }> {
  const inputs: unknown[] = [];
  const lines: string[] = [];
  const repository = recordingRepository(inputs);
  await jobsCommand(() => repository, (line) => lines.push(line)).parseAsync(['add', 'nightly', '-s', '30 2 * * *', '--handler', 'every-minute', ...args], { from: 'user' });
  return { inputs, lines };
}

describe('cronfence jobs add: DST policy flags', () => {
  it('passes --dst-gap and --dst-repeat as the job spec dst, and prints the policy', async () => {
    const { inputs, lines } = await add(['-z', 'America/New_York', '--dst-gap', 'skip', '--dst-repeat', 'twice']);
    expect(inputs[0]).toMatchObject({ timeZone: 'America/New_York', dst: { gap: 'skip', repeat: 'twice' } });
    expect(lines[0]).toContain('(DST skip/twice)');
  });

  it('leaves dst out when neither flag is given (the default applies)', async () => {
    const { inputs, lines } = await add([]);
    expect(inputs[0]).not.toHaveProperty('dst');
    expect(lines[0]).toContain('(DST shift/once)');
  });

  it('refuses a bad value naming the field', async () => {
    await expect(add(['--dst-gap', 'later'])).rejects.toThrowError(/invalid dst\.gap "later"/);
  });
});

describe('cronfence jobs list and get over a row that cannot be planned', () => {
  const good: StoredJob = { ...parseJobSpec({ id: 'good', schedule: '*/5 * * * *', handler: 'h' }), shard: 0, nextFireAt: Date.parse('2026-03-09T06:30:00Z'), version: 1, generation: 1, createdAt: 0, updatedAt: 0 };
  const bad: StoredJob = { ...good, id: 'bad', schedule: 'every tuesday-ish' };
  const setAside = { jobId: 'bad', generation: 1, reason: 'invalid schedule "every tuesday-ish"', from: 0, at: 0, by: 'scanner' };
  const repository = {
    list: async () => [bad, good],
    require: async (id: string) => (id === 'bad' ? bad : good),
    setAsideOf: async (job: StoredJob) => (job.id === 'bad' ? setAside : undefined),
  } as unknown as JobRepository;

  it('lists every other job, and the bad one as unreadable with the reason', async () => {
    const lines: string[] = [];
    await jobsCommand(() => repository, (line) => lines.push(line)).parseAsync(['list'], { from: 'user' });
    const rows = lines.join('\n').split('\n');
    expect(rows.find((row) => row.startsWith('bad '))).toMatch(/unreadable: .*every tuesday-ish/);
    expect(rows.find((row) => row.startsWith('good '))).toMatch(/enabled/);
  });

  it('get shows the set-aside record beside the job', async () => {
    const lines: string[] = [];
    await jobsCommand(() => repository, (line) => lines.push(line)).parseAsync(['get', 'bad'], { from: 'user' });
    expect(JSON.parse(lines.join('\n'))).toMatchObject({ id: 'bad', setAside });
  });
});
