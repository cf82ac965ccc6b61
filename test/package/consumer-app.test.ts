/**
 * cronfence as a package, the way a CDK team gets it: `npm pack`, then
 *
 * 1. a fresh `cdk init app --language typescript` app (the pinned aws-cdk's
 *    own template; its app command and tsconfig untouched) with the packed
 *    tarball installed and the README's "Use it in your CDK app" code blocks
 *    written as they are: `cdk synth` passes, and `cronfence dev --jobs`
 *    commits the README module's slices;
 * 2. examples/settlement-app with the tarball in place of `file:../..`:
 *    its own jest tests (cronfence/testing, CommonJS; the stack too), and
 *    `cronfence dev --jobs src/cron-jobs.ts` running its handler on 3 workers.
 *
 * 3. an ESM TypeScript app (fixtures/esm-app: "type": "module", NodeNext):
 *    it type-checks, synthesizes, and its vitest test runs a takeover
 *    through cronfence/testing (the ESM build).
 *
 * And the tarball itself holds what a team installs, not the repository's
 * tools (tools/: the drill and the bench) nor its tests, and the installed
 * `cronfence` has no `chaos` or `bench` command.
 *
 * The apps install from the registry, in parallel. The tests reuse the
 * suite's emulators through the AWS_ENDPOINT_URL variables.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { awsEndpoint } from '../support/aws-endpoint.ts';
import { writeReadmeFiles } from '../support/readme-app.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(path.join(tmpdir(), 'cronfence-package-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** A clean environment: none of the outer npm's `npm_*` settings, no cronfence or AWS settings unless given. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(npm_|CRONFENCE_|AWS_)/i.test(name) && name !== 'INIT_CWD'),
  );
  return { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...extra };
}

function run(command: string, args: readonly string[], cwd: string, env = cleanEnv(), timeoutMs = 240_000): Promise<Result> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

async function ok(command: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<Result> {
  const result = await run(command, args, cwd, env);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(' ')} in ${cwd} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

const timings: Record<string, number> = {};
let tarball: string;
let cdkInitApp: Promise<{ dir: string; cdkJson: string; tsconfig: string }>;
let exampleApp: Promise<string>;
let esmApp: Promise<string>;

beforeAll(async () => {
  const packed = await ok('npm', ['pack', '--pack-destination', work, '--silent'], ROOT);
  timings.pack = packed.ms;
  tarball = path.join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
  cdkInitApp = (async () => {
    const dir = path.join(work, 'my-app');
    mkdirSync(dir);
    // The pinned aws-cdk (the devDependency), offline: what `npx cdk init` runs.
    timings.cdkInit = (
      await ok(
        process.execPath,
        [path.join(ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'init', 'app', '--language', 'typescript', '--generate-only'],
        dir,
      )
    ).ms;
    const generated = {
      dir,
      cdkJson: readFileSync(path.join(dir, 'cdk.json'), 'utf8'),
      tsconfig: readFileSync(path.join(dir, 'tsconfig.json'), 'utf8'),
    };
    timings.cdkInitInstall = (await ok('npm', ['install', '--no-audit', '--no-fund', tarball], dir)).ms;
    return generated;
  })();
  exampleApp = (async () => {
    const dir = path.join(work, 'settlement-app');
    cpSync(path.join(ROOT, 'examples', 'settlement-app'), dir, {
      recursive: true,
      filter: (source) => !/[/\\](node_modules|cdk\.out|\.cronfence)$/.test(source),
    });
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    manifest.dependencies.cronfence = `file:${tarball}`;
    writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    timings.exampleInstall = (await ok('npm', ['install', '--no-audit', '--no-fund'], dir)).ms;
    return dir;
  })();
  esmApp = (async () => {
    const dir = path.join(work, 'esm-app');
    cpSync(path.join(ROOT, 'test', 'package', 'fixtures', 'esm-app'), dir, { recursive: true });
    timings.esmInstall = (await ok('npm', ['install', '--no-audit', '--no-fund', tarball], dir)).ms;
    return dir;
  })();
  // They run in the background; each test awaits its own. An unawaited failure is reported by the test that awaits it.
  for (const app of [cdkInitApp, exampleApp, esmApp]) app.catch(() => {});
}, 300_000);

afterAll(() => {
  process.stdout.write(`package test timings (ms): ${JSON.stringify(timings)}\n`);
});

describe('the packed files', () => {
  it('hold no tool (tools/, the drill, the bench) and no test', async () => {
    const listed = await ok('tar', ['-tzf', tarball], work);
    const files = listed.stdout.trim().split('\n');
    expect(files).toContain('package/dist/esm/lib/cli/main.js');
    const tools = files.filter(
      (file) => /^package\/(.*\/)?(tools|chaos|bench|test)\//.test(file) || /(chaos|bench|drill)[^/]*$|\.test\.[cm]?[jt]s$/.test(file),
    );
    expect(tools).toEqual([]);
  });

  it('hold no request meter, mock bank or example (tools/meter, examples/)', async () => {
    const files = (await ok('tar', ['-tzf', tarball], work)).stdout.trim().split('\n');
    expect(files.filter((file) => /(request-meter|request-units|mock-bank)[^/]*$|\/examples\//.test(file))).toEqual([]);
  });

  it('give a cronfence command without the tools’ chaos and bench', async () => {
    const app = await cdkInitApp;
    const help = await ok('npx', ['cronfence', '--help'], app.dir);
    expect(help.stdout).toMatch(/^ +dev /m);
    expect(help.stdout).not.toMatch(/^ +(chaos|bench)\b/m);
  }, 120_000);

  it('give a cronfence dev that, without --jobs (no examples are packed), names the flag and writes nothing', async () => {
    const app = await cdkInitApp;
    const stateDir = path.join(app.dir, '.cronfence-no-jobs');
    const dev = await run('npx', ['cronfence', 'dev', '--duration', '5'], app.dir, cleanEnv({ CRONFENCE_STATE_DIR: stateDir }), 60_000);
    expect(dev.code).not.toBe(0);
    expect(dev.stderr).toContain('cronfence: dev needs --jobs <module>');
    expect(dev.stdout).toBe('');
    expect(existsSync(stateDir)).toBe(false);
  }, 120_000);
});

describe('a stock cdk init app with the packed cronfence', () => {
  it('synthesizes the README stack with the template’s app command and tsconfig untouched', async () => {
    const app = await cdkInitApp;
    expect(JSON.parse(app.cdkJson).app).toBe('npx tsc && npx tsx bin/my-app.ts');
    expect(writeReadmeFiles(app.dir)).toEqual(['lib/my-app-stack.ts', 'src/cron-jobs.ts']);
    const synth = await ok('npx', ['cdk', 'synth', '-q'], app.dir);
    timings.cdkInitSynth = synth.ms;
    expect(readFileSync(path.join(app.dir, 'cdk.json'), 'utf8')).toBe(app.cdkJson);
    expect(readFileSync(path.join(app.dir, 'tsconfig.json'), 'utf8')).toBe(app.tsconfig);
    // Installed as a copy, with the peers the app's own: one aws-cdk-lib.
    expect(existsSync(path.join(app.dir, 'node_modules', 'cronfence', 'node_modules', 'aws-cdk-lib'))).toBe(false);
    expect(existsSync(path.join(app.dir, 'node_modules', 'cronfence', 'lib'))).toBe(false);
    const template = JSON.parse(readFileSync(path.join(app.dir, 'cdk.out', 'MyAppStack.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const jobs = Object.values(template.Resources).filter((resource) => resource.Type === 'Custom::CronfenceJob');
    expect(jobs.map((job) => JSON.parse(String(job.Properties.Job)).handler)).toEqual(['nightly-report']);
    expect(jobs[0]?.Properties.KnownHandlers).toEqual(['nightly-report']);
    const bundles = readdirSync(path.join(app.dir, 'cdk.out')).filter(
      (name) => name.startsWith('asset.') && existsSync(path.join(app.dir, 'cdk.out', name, 'index.mjs')),
    );
    const workers = bundles.filter((name) =>
      readFileSync(path.join(app.dir, 'cdk.out', name, 'index.mjs'), 'utf8').includes('nightly-report'),
    );
    expect(workers, 'the one bundle with the user’s handler').toHaveLength(1);
  }, 300_000);

  it('runs the README module locally: cronfence dev --jobs commits its slices into the table the module names', async () => {
    const app = await cdkInitApp;
    writeReadmeFiles(app.dir);
    const env = cleanEnv({
      ...endpointEnv(),
      CRONFENCE_PREFIX: `pkg${randomUUID().slice(0, 8)}`,
      CRONFENCE_STATE_DIR: path.join(app.dir, '.cronfence'),
    });
    const dev = await run(
      'npx',
      [
        'cronfence',
        'dev',
        '--jobs',
        'src/cron-jobs.ts',
        '--scanners',
        '1',
        '--workers',
        '2',
        '--duration',
        '20',
        '--schedule',
        '*/5 * * * * *',
      ],
      app.dir,
      env,
    );
    timings.cdkInitDev = dev.ms;
    expect(dev.code, `${dev.stdout}\n${dev.stderr}`).toBe(0);
    const commits = [...dev.stdout.matchAll(/^\S+ +nightly-report +(\S+) +lag +\d+ ms +worker-\d +fence +1 +committed$/gm)];
    // Without the module's `tables`, every run failed: table "reports" named in the commit does not exist.
    expect(commits.length, dev.stdout).toBeGreaterThanOrEqual(2);
    expect(dev.stdout).not.toMatch(/ (failed|dead) /);
  }, 120_000);
});

// Every endpoint variable in effect: DynamoDB has an emulator of its own (AWS_ENDPOINT_URL_DYNAMODB, lib/local/emulator.ts).
const endpointEnv = (): Record<string, string> => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('AWS_ENDPOINT_URL_') && Boolean(entry[1])),
  ),
  AWS_ENDPOINT_URL: awsEndpoint(),
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
});

describe('examples/settlement-app with the packed cronfence', () => {
  it('passes its own jest tests through cronfence/testing (the CommonJS build; its stack synthesized in them)', async () => {
    const dir = await exampleApp;
    const tests = await run('npm', ['test', '--silent'], dir, cleanEnv(endpointEnv()));
    timings.exampleTests = tests.ms;
    expect(tests.code, `${tests.stdout}\n${tests.stderr}`).toBe(0);
    expect(stripAnsi(tests.stderr)).toMatch(/Tests: +5 passed, 5 total/);
  }, 300_000);

  it('cronfence dev --jobs runs the example’s own handler on 3 workers, each slice committed once with its 1,200 payouts', async () => {
    const dir = await exampleApp;
    const prefix = `pkg${randomUUID().slice(0, 8)}`;
    const env = cleanEnv({ ...endpointEnv(), CRONFENCE_PREFIX: prefix, CRONFENCE_STATE_DIR: path.join(dir, '.cronfence') });
    const dev = await run(
      'npx',
      [
        'cronfence',
        'dev',
        '--jobs',
        'src/cron-jobs.ts',
        '--scanners',
        '1',
        '--workers',
        '3',
        '--duration',
        '30',
        '--schedule',
        '*/10 * * * * *',
      ],
      dir,
      env,
    );
    timings.exampleDev = dev.ms;
    expect(dev.code, `${dev.stdout}\n${dev.stderr}`).toBe(0);
    expect(dev.stdout).toContain('1 scanners and 3 workers running');
    expect(dev.stdout).toContain('registered merchant-settlement (*/10 * * * * *, Asia/Kolkata)');
    // The outbox dispatcher ran beside the workers (no BANK_URL here: the settlement books payouts without wires).
    expect(dev.stdout).toMatch(/^outbox: 0 requests delivered/m);
    const commits = [...dev.stdout.matchAll(/^\S+ +merchant-settlement +(\S+) +lag +\d+ ms +(worker-\d) +fence +1 +committed$/gm)].map(
      (match) => ({ at: match[1], worker: match[2] }),
    );
    const replicasLog = readFileSync(path.join(dir, '.cronfence', 'replicas.log'), 'utf8')
      .split('\n')
      .slice(-40)
      .join('\n');
    expect(commits.length, `${dev.stdout}\nreplicas.log:\n${replicasLog}`).toBeGreaterThanOrEqual(2);
    expect(new Set(commits.map((commit) => commit.at)).size).toBe(commits.length);
    for (const commit of commits) expect(['worker-1', 'worker-2', 'worker-3']).toContain(commit.worker);
    expect(dev.stdout, dev.stdout).toMatch(new RegExp(`^merchant-settlement +${commits.length} +${commits.length} +0 `, 'm'));

    const clients = createAwsClients();
    try {
      const rows: Record<string, unknown>[] = [];
      let startKey: Record<string, AttributeValue> | undefined;
      do {
        const page = await clients.dynamo.send(
          new ScanCommand({ TableName: `${prefix}-payouts`, ConsistentRead: true, ExclusiveStartKey: startKey }),
        );
        rows.push(...(page.Items ?? []).map((item) => unmarshall(item)));
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      // Each committed settlement: its summary row (payoutId = execution key) and one row per merchant, in 30 chunks.
      const summaries = rows.filter((row) => !String(row.payoutId).includes('#'));
      expect(summaries.map((payout) => payout.payoutId).sort()).toEqual(commits.map((commit) => `merchant-settlement:${commit.at}`).sort());
      for (const payout of summaries) {
        expect(payout).toMatchObject({ merchants: 1200, chunks: 30, fence: 1 });
        const merchants = rows.filter((row) => String(row.payoutId).startsWith(`${String(payout.payoutId)}#`)).map((row) => row.merchant);
        expect(new Set(merchants).size).toBe(1200);
      }
    } finally {
      destroyAwsClients(clients);
    }
  }, 300_000);
});

describe('an ESM TypeScript app with the packed cronfence', () => {
  it('type-checks, synthesizes, and runs a takeover in vitest', async () => {
    const dir = await esmApp;
    timings.esmSynth = (await ok('npx', ['cdk', 'synth', '-q'], dir)).ms;
    const template = readFileSync(path.join(dir, 'cdk.out', 'ReportsStack.template.json'), 'utf8');
    expect(template).toContain('Custom::CronfenceJob');
    const tests = await run('npm', ['test', '--silent'], dir, cleanEnv(endpointEnv()));
    timings.esmTests = tests.ms;
    expect(tests.code, `${tests.stdout}\n${tests.stderr}`).toBe(0);
    expect(stripAnsi(tests.stdout)).toMatch(/Tests +1 passed \(1\)/);
  }, 300_000);
});
