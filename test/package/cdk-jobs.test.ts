/**
 * CronScheduler({ jobs }): the worker Lambda generated around a user's jobs
 * module, the module's handler names read at synth (in a child process) and
 * `addJob` checked against them. The generated entry is bundled for real once
 * (esbuild, as `cdk synth` does) and loaded under Node.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { CronScheduler } from '../../lib/cdk/index.ts';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { JOB_RESOURCE_TYPE } from '../../lib/cdk/scheduled-job.ts';
import { resourcesOf, synthScheduler } from '../cdk/synth.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const JOBS = path.join(ROOT, 'test', 'package', 'fixtures', 'settle-jobs.ts');
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

function workerOf(template: ReturnType<typeof synthScheduler>['template']) {
  const workers = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).filter((fn) =>
    String(fn.Properties?.Description).startsWith('cronfence worker'),
  );
  expect(workers).toHaveLength(1);
  return workers[0];
}

describe('CronScheduler jobs:', () => {
  it('generates a worker entry around the module and checks addJob against its handlers', () => {
    const { scheduler, template } = synthScheduler({ jobs: JOBS, alarms: { enabled: false } }, (s) =>
      s.addJob('monthly-settlement', { schedule: '0 0 2 1 * *', timeZone: 'Asia/Kolkata', handler: 'settle' }),
    );
    expect(scheduler.knownHandlers).toEqual(['failing', 'settle', 'slow']);
    const job = Object.values(resourcesOf(template, JOB_RESOURCE_TYPE))[0]?.Properties as { KnownHandlers: string[] };
    expect(job.KnownHandlers).toEqual(['failing', 'settle', 'slow']);
    expect(workerOf(template)?.Properties?.Handler).toBe('index.handler');

    const entry = readFileSync(path.join(ROOT, 'node_modules', '.cache', 'cronfence', readCacheEntry()), 'utf8');
    expect(entry).toContain(`import * as jobs from ${JSON.stringify(JOBS)};`);
    expect(entry).toContain(`import { createJobsWorker } from ${JSON.stringify(path.join(ROOT, 'lib', 'lambda', 'entries.ts'))};`);
    expect(entry).toContain('export const handler = createJobsWorker(jobs);');

    expect(() => synthScheduler({ jobs: JOBS }, (s) => s.addJob('nightly', { schedule: '0 2 * * *', handler: 'nightly-report' }))).toThrow(
      /invalid handler "nightly-report": .*failing, settle, slow/,
    );
  });

  it('refuses a missing module, one without handlers, and jobs beside workerEntry or handlers, naming the prop', () => {
    expect(() => synthScheduler({ jobs: 'src/missing-jobs.ts' })).toThrow(
      new InvalidJobSpecError('jobs', 'src/missing-jobs.ts', `no such file (resolved to ${path.resolve('src/missing-jobs.ts')})`),
    );
    expect(() => synthScheduler({ jobs: path.join(ROOT, 'test', 'package', 'fixtures', 'no-handlers.ts') })).toThrow(/exports no handlers/);
    expect(() => synthScheduler({ jobs: JOBS, workerEntry: JOBS })).toThrow(
      /invalid workerEntry .*give either `jobs` \(your jobs module\) or `workerEntry` with `handlers`, not both/,
    );
    expect(() => synthScheduler({ jobs: JOBS, handlers: ['settle'] })).toThrow(/invalid handlers "settle"/);
  });

  it('bundles the generated worker with esbuild into a Lambda entry that loads and exports handler', async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'cronfence-cdk-jobs-'));
    cleanups.push(() => rmSync(outdir, { recursive: true, force: true }));
    const stack = new Stack(new App({ outdir, context: { 'aws:cdk:bundling-stacks': ['Bundled'] } }), 'Bundled');
    new CronScheduler(stack, 'Cron', { jobs: JOBS, alarms: { enabled: false } });
    // The worker's asset is the one bundle holding the module's handlers.
    const bundles = readdirSync(outdir)
      .filter((name) => name.startsWith('asset.'))
      .map((name) => path.join(outdir, name, 'index.mjs'))
      .filter((file) => existsSync(file) && readFileSync(file, 'utf8').includes('the bank is down'));
    expect(bundles).toHaveLength(1);
    const asset = path.dirname(bundles[0] ?? '');
    const loaded = (await import(pathToFileURL(path.join(asset, 'index.mjs')).href)) as { handler: unknown };
    expect(typeof loaded.handler).toBe('function');
  }, 120_000);
});

function readCacheEntry(): string {
  const dir = path.join(ROOT, 'node_modules', '.cache', 'cronfence');
  const names = readdirSync(dir).filter((name) => name.startsWith('worker-') && name.endsWith('.mjs'));
  // This checkout's: node_modules may be shared with other checkouts (git worktrees), whose entries sit beside it.
  const mine = names.find((name) => {
    const text = readFileSync(path.join(dir, name), 'utf8');
    return text.includes('for Test/Cron:') && text.includes(JSON.stringify(JOBS));
  });
  if (!mine) throw new Error(`no generated worker entry for Test/Cron in ${dir}: ${names.join(', ')}`);
  return mine;
}
