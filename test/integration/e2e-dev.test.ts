/**
 * End to end through the real CLI: `cronfence dev` with 2 scanners and 3
 * workers as separate processes, on the shared emulator, for 30 seconds.
 * Every occurrence of the 5-second job (computed here with cron-parser
 * directly, not lib/core/schedule.ts) is committed exactly once, and the
 * settlement writes exactly one payout per commit.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { CronExpressionParser } from 'cron-parser';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.ts';
import { awsEndpoint } from '../support/aws-endpoint.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DURATION_SECONDS = 30;
/** Occurrences this close to the process's end may legitimately still be in flight when replicas stop. */
const END_SLACK_MS = 8000;

const EVENT_TYPES = ['claimed', 'started', 'committed', 'failed', 'dead', 'fenced_out', 'missed', 'skipped'];
const ISO_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface DevEvent {
  readonly type: string;
  readonly jobId: string;
  readonly scheduledAt: string;
  readonly executionKey: string;
  readonly fence: number;
  readonly worker: string;
  readonly at: string;
  readonly attempt?: number;
}

interface DevRun {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly endedAt: number;
}

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
});

function runDev(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<DevRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'tools/cli/main.ts',
        'dev',
        '--scanners',
        '2',
        '--workers',
        '3',
        '--duration',
        String(DURATION_SECONDS),
        '--json',
      ],
      { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // SIGINT lets dev stop its replicas; SIGKILL if it does not end.
    const timer = setTimeout(() => {
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
    }, timeoutMs);
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, endedAt: Date.now() });
    });
  });
}

/** Occurrences of a cron in [fromMs, toMs], both ends included, by cron-parser itself. */
function cronOccurrences(cron: string, timeZone: string, fromMs: number, toMs: number): number[] {
  const expression = CronExpressionParser.parse(cron, { currentDate: new Date(fromMs - 1), tz: timeZone });
  const out: number[] = [];
  for (;;) {
    const next = expression.next().getTime();
    if (next > toMs) return out;
    out.push(next);
  }
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

describe('cronfence dev, end to end', () => {
  it('commits every occurrence of every-5-seconds exactly once and pays each settlement once', async () => {
    const endpoint = awsEndpoint();
    const prefix = `e2e${randomUUID().slice(0, 8)}`;
    const stateDir = mkdtempSync(path.join(tmpdir(), 'cronfence-e2e-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CRONFENCE_')));
    Object.assign(env, { AWS_ENDPOINT_URL: endpoint, CRONFENCE_PREFIX: prefix, CRONFENCE_STATE_DIR: stateDir });

    const startedAt = Date.now();
    const run = await runDev(env, 110_000);
    expect(run.signal, `dev was killed; stderr:\n${run.stderr}`).toBeNull();
    expect(run.exitCode, `dev exited with ${run.exitCode}; stderr:\n${run.stderr}`).toBe(0);

    // --json: one lifecycle event per line, nothing else on stdout.
    const lines = run.stdout.split('\n');
    expect(lines.at(-1)).toBe('');
    const events: DevEvent[] = lines.slice(0, -1).map((line, index) => {
      let parsed: unknown;
      expect(() => (parsed = JSON.parse(line)), `stdout line ${index + 1} is not JSON: ${line}`).not.toThrow();
      return parsed as DevEvent;
    });
    expect(events.length).toBeGreaterThan(0);
    for (const event of events) {
      expect(EVENT_TYPES, JSON.stringify(event)).toContain(event.type);
      expect(typeof event.jobId, JSON.stringify(event)).toBe('string');
      expect(event.scheduledAt, JSON.stringify(event)).toMatch(ISO_SECOND);
      expect(event.executionKey, JSON.stringify(event)).toBe(`${event.jobId}:${event.scheduledAt}`);
      expect(Number.isInteger(event.fence), JSON.stringify(event)).toBe(true);
      expect(typeof event.worker === 'string' && event.worker.length > 0, JSON.stringify(event)).toBe(true);
      expect(event.at, JSON.stringify(event)).toMatch(ISO_MILLIS);
      expect(Date.parse(event.at), JSON.stringify(event)).toBeGreaterThanOrEqual(startedAt - 1000);
      expect(Date.parse(event.at), JSON.stringify(event)).toBeLessThanOrEqual(run.endedAt + 1000);
    }
    const committed = events.filter((event) => event.type === 'committed');
    const doubleCommits = [...countBy(committed, (event) => event.executionKey)].filter(([, count]) => count > 1);
    expect(doubleCommits, 'execution keys with two committed events').toEqual([]);
    // Work was spread over the worker fleet's ids (not necessarily all three).
    for (const event of committed) expect(event.worker).toMatch(/^worker-[1-3]$/);

    const runtime: Runtime = createRuntime({ env });
    cleanups.push(() => {
      runtime.clients.dynamo.destroy();
      runtime.clients.sqs.destroy();
      runtime.clients.events.destroy();
    });
    const jobs = runtime.jobs();
    const since = startedAt - 120_000;

    // every-5-seconds: each occurrence from the first commit to shortly before the end, exactly once.
    const fiveSecondCommits = committed.filter((event) => event.jobId === 'every-5-seconds');
    expect(fiveSecondCommits.length).toBeGreaterThan(0);
    const firstCommitted = Math.min(...fiveSecondCommits.map((event) => Date.parse(event.scheduledAt)));
    const expected = cronOccurrences('*/5 * * * * *', 'UTC', firstCommitted, run.endedAt - END_SLACK_MS);
    expect(expected.length, 'occurrences in the checked interval').toBeGreaterThanOrEqual(4);
    // Nothing was lost before the first commit either: it is the job's first occurrence after it was registered.
    const registered = await jobs.require('every-5-seconds');
    expect(new Date(firstCommitted).toISOString()).toBe(
      new Date(cronOccurrences('*/5 * * * * *', 'UTC', registered.createdAt, registered.createdAt + 5000)[0] ?? 0).toISOString(),
    );

    const ledger = await jobs.ledgerOf('every-5-seconds', since);
    const slices = await jobs.slicesOf('every-5-seconds', since);
    const commitsByKey = countBy(fiveSecondCommits, (event) => event.executionKey);
    const ledgerByScheduledAt = countBy(
      ledger.filter((record) => record.outcome === 'SUCCEEDED'),
      (record) => String(record.scheduledAt),
    );
    const problems: string[] = [];
    for (const scheduledAt of expected) {
      const key = `every-5-seconds:${new Date(scheduledAt).toISOString().replace('.000Z', 'Z')}`;
      const records = ledgerByScheduledAt.get(String(scheduledAt)) ?? 0;
      const commits = commitsByKey.get(key) ?? 0;
      if (records !== 1) problems.push(`${key}: ${records} SUCCEEDED ledger records`);
      if (commits !== 1) problems.push(`${key}: ${commits} committed events`);
      const slice = slices.find((candidate) => candidate.scheduledAt === scheduledAt);
      if (slice?.status !== 'SUCCEEDED') problems.push(`${key}: slice is ${slice?.status ?? 'missing'}`);
    }
    expect(problems).toEqual([]);
    // The ledger holds one record per key, ever.
    expect(new Set(ledger.map((record) => record.executionKey)).size).toBe(ledger.length);

    // The fence in the ledger is the fence of the worker whose commit won, for every job.
    const ledgers = new Map<string, LedgerRecord>();
    for (const jobId of new Set(committed.map((event) => event.jobId))) {
      for (const record of await jobs.ledgerOf(jobId, since)) ledgers.set(record.executionKey, record);
    }
    for (const event of committed) {
      const record = ledgers.get(event.executionKey);
      expect(record, `ledger record of ${event.executionKey}`).toBeDefined();
      expect({ key: event.executionKey, outcome: record?.outcome, fence: record?.fence, owner: record?.owner }).toEqual({
        key: event.executionKey,
        outcome: 'SUCCEEDED',
        fence: event.fence,
        owner: event.worker,
      });
    }
    const fenceBySlice = new Map(slices.map((slice) => [slice.scheduledAt, slice.fence]));
    for (const record of ledger) expect(fenceBySlice.get(record.scheduledAt), record.executionKey).toBe(record.fence);

    // merchant-settlement-fast: per SUCCEEDED ledger record, its summary row (keyed by the execution key) and one payout
    // row per merchant (`<executionKey>#<merchant>`), each written by a chunk of the claim that committed it or an earlier one.
    const settlements = (await jobs.ledgerOf('merchant-settlement-fast', since)).filter((record) => record.outcome === 'SUCCEEDED');
    const payouts: Record<string, unknown>[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await runtime.clients.dynamo.send(
        new ScanCommand({ TableName: `${prefix}-payouts`, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      payouts.push(...(page.Items ?? []).map((item) => unmarshall(item)));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    const summaries = payouts.filter((payout) => !String(payout.payoutId).includes('#'));
    expect(summaries.map((payout) => payout.payoutId).sort()).toEqual(settlements.map((record) => record.executionKey).sort());
    for (const record of settlements) {
      const summary = summaries.find((candidate) => candidate.payoutId === record.executionKey);
      expect(summary).toMatchObject({ jobId: 'merchant-settlement-fast', fence: record.fence, worker: record.owner, merchants: 1200 });
      const rows = payouts.filter((payout) => String(payout.payoutId).startsWith(`${record.executionKey}#`));
      expect(new Set(rows.map((row) => row.merchant)).size, `merchants paid by ${record.executionKey}`).toBe(1200);
      for (const row of rows) expect(Number(row.fence)).toBeLessThanOrEqual(record.fence);
    }
  }, 120_000);
});
