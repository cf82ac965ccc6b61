import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobRepository } from '../../lib/engine/job-repository.ts';
import { parseJobSpec } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import { jobsCommand } from '../../lib/cli/jobs-command.ts';
import { refusalOf } from '../support/cli-refusal.ts';

/** A repository that validates like the real one and keeps what it was given. */
function recordingRepository(inputs: unknown[]): JobRepository {
  return {
    put: async (input: unknown) => {
      inputs.push(input);
      const spec = parseJobSpec(input);
      const job: StoredJob = {
        ...spec,
        shard: 0,
        nextFireAt: Date.parse('2026-03-09T06:30:00Z'),
        version: 1,
        generation: 1,
        createdAt: 0,
        updatedAt: 0,
      };
      return { job, created: true, skipped: 0 };
    },
  } as unknown as JobRepository;
}

async function add(args: string[]): Promise<{ inputs: unknown[]; lines: string[] }> {
  const inputs: unknown[] = [];
  const lines: string[] = [];
  const repository = recordingRepository(inputs);
  await jobsCommand(
    () => repository,
    (line) => lines.push(line),
  ).parseAsync(['add', 'nightly', '-s', '30 2 * * *', '--handler', 'every-minute', ...args], { from: 'user' });
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

/** What `jobs add` writes to stderr when commander refuses a flag's value (it must not run). */
async function refusedAdd(args: string[]): Promise<string> {
  const command = jobsCommand(
    () => recordingRepository([]),
    () => {},
  ).commands.find((sub) => sub.name() === 'add')!;
  return refusalOf(command, ['nightly', '-s', '30 2 * * *', '--handler', 'every-minute', ...args]);
}

describe('cronfence jobs add: --catch-up and --payload @file', () => {
  it('--catch-up takes a duration as the CLI parses them elsewhere, into policies.catchUpWindowMs', async () => {
    const { inputs } = await add(['--catch-up', '2h']);
    expect(inputs[0]).toMatchObject({ policies: { catchUpWindowMs: 7_200_000 } });
    expect(await refusedAdd(['--catch-up', 'soon'])).toContain(
      `option '--catch-up <duration>' argument 'soon' is invalid. "soon" is not a duration like 500ms, 30s, 2m or 1h`,
    );
    // The range is the job spec's, named by its field.
    await expect(add(['--catch-up', '8d'])).rejects.toThrowError(/policies\.catchUpWindowMs/);
  });

  it('--payload @file reads the JSON object from the file; errors name the file and the problem', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cronfence-payload-'));
    const file = (name: string, text: string): string => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    try {
      const good = file('good.json', '{"merchants": 3, "note": "it\'s quoted"}');
      expect((await add(['--payload', `@${good}`])).inputs[0]).toMatchObject({ payload: { merchants: 3, note: "it's quoted" } });
      const missing = path.join(dir, 'missing.json');
      expect(await refusedAdd(['--payload', `@${missing}`])).toContain(
        `argument '@${missing}' is invalid. cannot read payload file ${JSON.stringify(missing)}: ENOENT`,
      );
      const broken = file('broken.json', '{"merchants": ');
      expect(await refusedAdd(['--payload', `@${broken}`])).toContain(`payload file ${JSON.stringify(broken)} is not valid JSON: `);
      const list = file('list.json', '[1, 2]');
      expect(await refusedAdd(['--payload', `@${list}`])).toContain(
        `payload file ${JSON.stringify(list)} holds an array, not a JSON object`,
      );
      expect(await refusedAdd(['--payload', '@'])).toContain('"@" names no file');
      // Inline JSON as before.
      expect((await add(['--payload', '{"a":1}'])).inputs[0]).toMatchObject({ payload: { a: 1 } });
      expect(await refusedAdd(['--payload', '[1]'])).toContain(`"[1]" holds an array, not a JSON object`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cronfence jobs add: --precision', () => {
  it('passes within-second as policies.startPrecision; leaves it out when not given', async () => {
    expect((await add(['--precision', 'within-second'])).inputs[0]).toMatchObject({ policies: { startPrecision: 'within-second' } });
    expect((await add([])).inputs[0]).not.toHaveProperty('policies');
  });

  it('refuses a bad value naming the flag and the value, before anything is written', async () => {
    expect(await refusedAdd(['--precision', 'roughly'])).toContain(
      `option '--precision <precision>' argument 'roughly' is invalid. "roughly" is not "exact" or "within-second"`,
    );
  });
});

describe('cronfence jobs get', () => {
  const job: StoredJob = {
    ...parseJobSpec({
      id: 'nightly',
      schedule: '30 2 * * *',
      handler: 'every-minute',
      payload: { a: 1 },
      policies: { catchUpWindowMs: 7_200_000, overlap: 'skip' },
    }),
    shard: 3,
    nextFireAt: Date.parse('2026-03-09T02:30:00Z'),
    version: 4,
    generation: 2,
    createdAt: Date.parse('2026-03-01T10:00:00Z'),
    updatedAt: Date.parse('2026-03-02T11:30:15Z'),
    enabled: false,
    pause: { actor: 'alice', reason: 'incident 42', at: Date.parse('2026-03-02T11:30:15Z') },
  };
  const get = async (args: string[]): Promise<string[]> => {
    const lines: string[] = [];
    const repository = { require: async () => job, setAsideOf: async () => undefined } as unknown as JobRepository;
    await jobsCommand(
      () => repository,
      (line) => lines.push(line),
    ).parseAsync(['get', 'nightly', ...args], { from: 'user' });
    return lines;
  };

  it('shows the job readably: ISO times, durations with units, the state; no epoch milliseconds', async () => {
    const text = (await get([])).join('\n');
    expect(text).toMatch(/^created\s+2026-03-01T10:00:00Z$/m);
    expect(text).toMatch(/^updated\s+2026-03-02T11:30:15Z$/m);
    expect(text).toMatch(/^state\s+paused by alice$/m);
    expect(text).toMatch(/^paused\s+2026-03-02T11:30:15Z by alice: incident 42$/m);
    expect(text).toMatch(/^catch-up window\s+2h$/m);
    expect(text).toMatch(/^overlap\s+skip$/m);
    expect(text).toMatch(/^start precision\s+exact$/m);
    expect(text).toMatch(/^payload\s+\{"a":1\}$/m);
    expect(text).not.toMatch(/\d{13}/);
  });

  it('--json prints the stored job as it is, for scripts', async () => {
    const lines = await get(['--json']);
    expect(JSON.parse(lines.join('\n'))).toEqual(job);
  });
});

describe('cronfence jobs list and get over a row that cannot be planned', () => {
  const good: StoredJob = {
    ...parseJobSpec({ id: 'good', schedule: '*/5 * * * *', handler: 'h' }),
    shard: 0,
    nextFireAt: Date.parse('2026-03-09T06:30:00Z'),
    version: 1,
    generation: 1,
    createdAt: 0,
    updatedAt: 0,
  };
  const bad: StoredJob = { ...good, id: 'bad', schedule: 'every tuesday-ish' };
  const setAside = { jobId: 'bad', generation: 1, reason: 'invalid schedule "every tuesday-ish"', from: 0, at: 0, by: 'scanner' };
  const repository = {
    list: async () => [bad, good],
    require: async (id: string) => (id === 'bad' ? bad : good),
    setAsideOf: async (job: StoredJob) => (job.id === 'bad' ? setAside : undefined),
  } as unknown as JobRepository;

  it('lists every other job, and the bad one as unreadable with the reason', async () => {
    const lines: string[] = [];
    await jobsCommand(
      () => repository,
      (line) => lines.push(line),
    ).parseAsync(['list'], { from: 'user' });
    const rows = lines.join('\n').split('\n');
    expect(rows.find((row) => row.startsWith('bad '))).toMatch(/unreadable: .*every tuesday-ish/);
    expect(rows.find((row) => row.startsWith('good '))).toMatch(/enabled/);
  });

  it('get shows the set-aside record beside the job, readably and in --json', async () => {
    const lines: string[] = [];
    await jobsCommand(
      () => repository,
      (line) => lines.push(line),
    ).parseAsync(['get', 'bad'], { from: 'user' });
    const text = lines.join('\n');
    expect(text).toMatch(/^set aside\s+since 1970-01-01T00:00:00Z by scanner \(generation 1\): invalid schedule "every tuesday-ish"$/m);
    expect(text).toMatch(/^next fire \(UTC\)\s+unreadable: /m);
    const json: string[] = [];
    await jobsCommand(
      () => repository,
      (line) => json.push(line),
    ).parseAsync(['get', 'bad', '--json'], { from: 'user' });
    expect(JSON.parse(json.join('\n'))).toMatchObject({ id: 'bad', setAside });
  });
});
