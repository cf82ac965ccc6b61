/**
 * `cronfence verify` against a real installation on the emulator: a real
 * scanner and a real worker (SqsPoller + createWorkerHandler) run two jobs
 * for a few seconds, one is deleted; the audit passes with the counts
 * cron-parser gives, business rows (--effects) included. Then the store is
 * broken by hand, one way per violation kind, and each is reported with its
 * execution key (exit 1), through the function and through the CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DeleteItemCommand, PutItemCommand, UpdateItemCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../../lib/aws/bootstrap.ts';
import { CronExpressionParser } from 'cron-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sliceKeyItem, toItem } from '../../lib/aws/dynamo/items.ts';
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import type { AuditReport } from '../../lib/core/audit.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import type { Slice } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const GRACE_MS = 2000;
/** The business table each commit writes one row to, stamped with execution key and fence. */
let effectsTable: string;
const handlers = new HandlerRegistry([
  defineJob('verify-ok', async (ctx) => {
    await ctx.commit([
      {
        put: {
          tableName: effectsTable,
          item: { effectId: `${ctx.executionKey}#${ctx.fence}`, executionKey: ctx.executionKey, fence: ctx.fence },
        },
      },
    ]);
  }),
]);

let installation: TestInstallation;
let kept: StoredJob;
let since: number;
let until: number;

/** Occurrences in [from, to), by cron-parser itself (not lib/core/schedule.ts). */
function occurrences(cron: string, from: number, to: number): number[] {
  const expression = CronExpressionParser.parse(cron, { currentDate: new Date(from - 1), tz: 'UTC' });
  const out: number[] = [];
  for (let at = expression.next().getTime(); at < to; at = expression.next().getTime()) out.push(at);
  return out;
}

const verify = (overrides: { jobId?: string } = {}): Promise<AuditReport> =>
  verifyInstallation(
    { dynamo: installation.runtime.clients.dynamo, config: installation.runtime.config },
    { since, until, graceMs: GRACE_MS, effects: [{ table: effectsTable }], ...overrides },
  );

beforeAll(async () => {
  installation = await createTestInstallation({ env: { CRONFENCE_LOOKAHEAD_MS: '10000' } });
  const { runtime } = installation;
  effectsTable = `${installation.prefix}-verify-effects`;
  await runtime.clients.dynamo.send(
    new CreateTableCommand(
      createTableInput(effectsTable, {
        logicalName: 'verify-effects',
        partitionKey: { name: 'effectId', type: 'S' },
        globalSecondaryIndexes: [],
      }),
    ),
  );
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: effectsTable });
  const poller = new SqsPoller({
    sqs: runtime.clients.sqs,
    queueUrl: installation.resources.queueUrls.work,
    handler: createWorkerHandler(runtime, 'w1', handlers, { error: () => {}, info: () => {} }),
    waitTimeSeconds: 1,
  });
  const polling = poller.run();
  const jobs = runtime.jobs(handlers.names());
  since = Date.now() - 1000;
  kept = (await jobs.put({ id: 'verify-kept', schedule: '*/2 * * * * *', handler: 'verify-ok' })).job;
  await jobs.put({ id: 'verify-deleted', schedule: '*/3 * * * * *', handler: 'verify-ok' });
  const scanning = setInterval(
    () =>
      void runtime
        .scanner('s1')
        .scanShard(0)
        .catch(() => {}),
    3000,
  );
  await runtime.scanner('s1').scanShard(0);
  // Twelve seconds of real runs (at least five occurrences of */2, which the tests below break one by one), then the
  // second job is deleted (its later slices are settled SKIPPED).
  await new Promise((resolve) => setTimeout(resolve, 12_000));
  await jobs.delete('verify-deleted');
  until = Math.floor(Date.now() / 1000) * 1000;
  const keys = occurrences(kept.schedule, kept.updatedAt, until);
  await eventually(
    async () => {
      const slices = await jobs.slicesOf(kept.id, since);
      const done = slices.filter((slice) => slice.scheduledAt < until && slice.status === 'SUCCEEDED');
      return done.length === keys.length ? true : undefined;
    },
    20_000,
    250,
  );
  clearInterval(scanning);
  poller.stop();
  await polling;
  // Everything in the window is older than the grace.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, until + GRACE_MS + 100 - Date.now())));
}, 60_000);

afterAll(() => installation?.destroy());

describe('cronfence verify on a real installation', () => {
  it('passes the history a real scanner and worker left, with the expected counts', async () => {
    const report = await verify();
    const expected = occurrences(kept.schedule, kept.updatedAt, until).length;
    expect(report.violations).toEqual([]);
    expect(report.exitCode).toBe(0);
    expect(report.jobs).toEqual({ checked: 2, enabled: 1, paused: 0, deleted: 1, unknown: 0 });
    expect(expected).toBeGreaterThanOrEqual(4);
    expect(report.expected).toEqual({
      occurrences: expected,
      final: { SUCCEEDED: expected, DEAD: 0, SKIPPED: 0, MISSED: 0 },
      pending: 0,
      stuck: 0,
      missing: 0,
    });
    // The deleted job's slices are read too (from its tombstone): committed ones with their ledger records.
    const deleted = report.perJob.find((job) => job.jobId === 'verify-deleted');
    expect(deleted).toMatchObject({ state: 'deleted', expected: 0 });
    expect(deleted?.slices).toBeGreaterThan(0);
    expect(report.ledgerRecords).toBe(report.slices.byStatus.SUCCEEDED);
    expect(report.effects).toBe(report.ledgerRecords);
    expect(report.notes).toEqual([]);
    expect(report.startLag.count).toBeGreaterThan(0);
  });

  it('narrows to one job with --job', async () => {
    const report = await verify({ jobId: kept.id });
    expect(report.perJob.map((job) => job.jobId)).toEqual([kept.id]);
    expect(report.exitCode).toBe(0);
  });

  it('reports each way the store is broken by hand, with its execution key, and exits 1 (function and CLI)', async () => {
    const { dynamo } = installation.runtime.clients;
    const { slicesTable } = installation.runtime.config;
    const [a, b, c, d] = occurrences(kept.schedule, kept.updatedAt, until);
    if (d === undefined) throw new Error('fewer than four occurrences ran');
    const key = (at: number | undefined): string => executionKey(kept.id, at as number);
    const sliceKey = (at: number | undefined) => sliceKeyItem({ jobId: kept.id, scheduledAt: at as number });
    // b: set back to ENQUEUED in the past (stuck, and its business row has no commit on record).
    await dynamo.send(
      new UpdateItemCommand({
        TableName: slicesTable,
        Key: sliceKey(b),
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': { S: 'ENQUEUED' } },
      }),
    );
    // c: the slice's last claim moved on to another worker (its business row is a zombie's).
    await dynamo.send(
      new UpdateItemCommand({
        TableName: slicesTable,
        Key: sliceKey(c),
        UpdateExpression: 'SET fence = fence + :one, #o = :o',
        ExpressionAttributeNames: { '#o': 'owner' },
        ExpressionAttributeValues: { ':one': { N: '1' }, ':o': { S: 'w-zombie-standby' } },
      }),
    );
    // d: slice (with its ledger record) and business row gone (an occurrence that never ran).
    await dynamo.send(new DeleteItemCommand({ TableName: slicesTable, Key: sliceKey(d) }));
    await dynamo.send(new DeleteItemCommand({ TableName: effectsTable, Key: { effectId: { S: `${key(d)}#1` } } }));
    // An off-schedule second: a SKIPPED slice with no reason.
    const odd = (a as number) + 1000;
    const skipped: Slice = {
      jobId: kept.id,
      scheduledAt: odd,
      status: 'SKIPPED',
      fence: 0,
      attempts: 0,
      handler: 'verify-ok',
      policies: DEFAULT_POLICIES,
      shard: 0,
      generation: kept.generation,
      createdAt: odd,
    };
    await dynamo.send(new PutItemCommand({ TableName: slicesTable, Item: toItem({ ...skipped }) }));

    // a again: a second commit's business row (fence 9) next to the first one's, and a row with no fence at all.
    await dynamo.send(
      new PutItemCommand({ TableName: effectsTable, Item: toItem({ effectId: `${key(a)}#9`, executionKey: key(a), fence: 9 }) }),
    );
    await dynamo.send(
      new PutItemCommand({ TableName: effectsTable, Item: toItem({ effectId: 'unstamped', note: 'written outside a commit' }) }),
    );

    const report = await verify();
    const found = report.violations.map((violation) => `${violation.kind} ${violation.executionKey}`).sort();
    expect(found).toEqual(
      [
        `double_commit ${key(a)}`,
        `outcome_mismatch ${key(b)}`,
        `stuck ${key(b)}`,
        `double_commit ${key(c)}`,
        `missing ${key(d)}`,
        `skipped_without_reason ${executionKey(kept.id, odd)}`,
      ].sort(),
    );
    const detailOf = (kind: string, at: number | undefined) =>
      report.violations.find((v) => v.kind === kind && v.executionKey === key(at))?.detail;
    expect(detailOf('double_commit', c)).toBe(`business writes of fence 1 in ${effectsTable} but the commit on record is fence 2`);
    expect(detailOf('double_commit', a)).toBe(`business writes from fences 1 and 9 in ${effectsTable}`);
    expect(report.notes).toEqual([`1 items of ${effectsTable} carry no execution key or numeric fence: not checked`]);
    expect(report.exitCode).toBe(1);

    const cli = await runCli([
      'verify',
      '--since',
      new Date(since).toISOString(),
      '--until',
      new Date(until).toISOString(),
      '--grace',
      '2s',
      '--effects',
      effectsTable,
      '--json',
    ]);
    expect(cli.code, cli.stderr).toBe(1);
    const printed = JSON.parse(cli.stdout) as AuditReport;
    expect(printed.violationCounts).toEqual({
      double_commit: 2,
      outcome_mismatch: 1,
      ledger_without_slice: 0,
      missing: 1,
      stuck: 1,
      skipped_without_reason: 1,
      wrong_definition: 0,
      not_an_occurrence: 0,
      stale: 0,
      set_aside: 0,
      unreadable_row: 0,
    });
    // Without --effects no business row is seen: the stuck, missing and reasonless slices still are.
    const human = await runCli([
      'verify',
      '--since',
      new Date(since).toISOString(),
      '--until',
      new Date(until).toISOString(),
      '--grace',
      '2s',
    ]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('VIOLATIONS: 1 missing, 1 stuck, 1 skipped_without_reason');
    expect(human.stdout).not.toContain(key(c));
  });

  it('reports a slot that ran another handler, a SUCCEEDED slot off the schedule and unreadable rows, and checks the rest (exit 1)', async () => {
    const { dynamo } = installation.runtime.clients;
    const { slicesTable, jobsTable } = installation.runtime.config;
    const [, b, c, , e] = occurrences(kept.schedule, kept.updatedAt, until);
    if (b === undefined || c === undefined || e === undefined) throw new Error('fewer than five occurrences ran');
    const sliceKey = (at: number) => sliceKeyItem({ jobId: kept.id, scheduledAt: at });
    // e: what a forged work message of the current generation made the worker run (the stored definition says verify-ok).
    await dynamo.send(
      new UpdateItemCommand({
        TableName: slicesTable,
        Key: sliceKey(e),
        UpdateExpression: 'SET #h = :h, #p = :p',
        ExpressionAttributeNames: { '#h': 'handler', '#p': 'payload' },
        ExpressionAttributeValues: { ':h': { S: 'drain-account' }, ':p': { M: { to: { S: 'attacker' } } } },
      }),
    );
    // A SUCCEEDED slot at an odd second: not an occurrence of */2.
    const odd = b + 1000;
    const ran: Slice = {
      jobId: kept.id,
      scheduledAt: odd,
      status: 'SUCCEEDED',
      fence: 1,
      owner: 'w1',
      attempts: 1,
      handler: 'verify-ok',
      policies: DEFAULT_POLICIES,
      shard: 0,
      generation: kept.generation,
      createdAt: odd,
      finishedAt: odd + 10,
    };
    await dynamo.send(new PutItemCommand({ TableName: slicesTable, Item: toItem({ ...ran }) }));
    // Bad rows: a job item a manual edit left without policies, and a slice item with a status no engine writes.
    await dynamo.send(
      new PutItemCommand({
        TableName: jobsTable,
        Item: toItem({
          jobId: 'verify-garbled',
          schedule: '* * * * * *',
          timeZone: 'UTC',
          handler: 'verify-ok',
          enabled: true,
          shard: 0,
          nextFireAt: since,
          version: 1,
          generation: 1,
          createdAt: since,
          updatedAt: since,
        }),
      }),
    );
    await dynamo.send(new PutItemCommand({ TableName: slicesTable, Item: toItem({ ...ran, scheduledAt: c + 1000, status: 'HALF-DONE' }) }));

    const report = await verify();
    const found = (kind: string) =>
      report.violations.filter((violation) => violation.kind === kind).map((violation) => `${violation.executionKey}: ${violation.detail}`);
    expect(found('wrong_definition')).toEqual([
      `${executionKey(kept.id, e)}: ran handler "drain-account"; the job's generation ${kept.generation} runs "verify-ok"; ran payload {"to":"attacker"}; the job's generation ${kept.generation} has null`,
    ]);
    expect(found('not_an_occurrence')).toEqual([
      `${executionKey(kept.id, odd)}: SUCCEEDED at a second that is not an occurrence of "*/2 * * * * *" (UTC)`,
    ]);
    expect(found('unreadable_row').sort()).toEqual(
      [
        `job verify-garbled: jobs item verify-garbled: policies must be an object of numbers; not checked`,
        `${executionKey(kept.id, c + 1000)}: slices item ${executionKey(kept.id, c + 1000)}: status is not a slice status; not checked`,
      ].sort(),
    );
    // The rest is still checked: every occurrence but the two the previous test broke (b, d) is final.
    expect(report.expected.final.SUCCEEDED).toBe(occurrences(kept.schedule, kept.updatedAt, until).length - 2);
    expect(report.exitCode).toBe(1);
    const cli = await runCli([
      'verify',
      '--since',
      new Date(since).toISOString(),
      '--until',
      new Date(until).toISOString(),
      '--grace',
      '2s',
    ]);
    expect(cli.code, cli.stderr).toBe(1);
    expect(cli.stdout).toMatch(/VIOLATIONS: .*1 wrong_definition, 1 not_an_occurrence, 2 unreadable_row/);
  });

  it('says it checked nothing when no occurrence was expected (a deleted job alone), exit 3 through the CLI', async () => {
    const cli = await runCli([
      'verify',
      '--job',
      'verify-deleted',
      '--since',
      new Date(since).toISOString(),
      '--until',
      new Date(until).toISOString(),
      '--grace',
      '2s',
    ]);
    expect(cli.code, cli.stderr).toBe(3);
    expect(cli.stdout).toContain('NOTHING CHECKED (exit 3): no active job (1 paused or deleted): no occurrence was expected');
  });

  it('refuses bad input naming the flag and value, exit 2', async () => {
    const bad = await runCli(['verify', '--since', 'garbage']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `option '--since <time>' argument 'garbage' is invalid. "garbage" is neither an ISO time nor a duration like 10m`,
    );
    const unknown = await runCli(['verify', '--job', 'no-such-job', '--since', '1h']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--job "no-such-job": no job, deleted job, slice or ledger record with this id');
    const backwards = await runCli(['verify', '--since', '1h', '--until', '2h']);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/--until \S+ is not after --since \S+/);
    const missingTable = await runCli(['verify', '--since', '1h', '--effects', `${installation.prefix}-no-such-table`]);
    expect(missingTable.code).toBe(2);
    expect(missingTable.stderr).toContain(`business table "${installation.prefix}-no-such-table" does not exist`);
  });
});

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/cronfence.mjs', ...args], {
      cwd: REPO_ROOT,
      env: installation.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
