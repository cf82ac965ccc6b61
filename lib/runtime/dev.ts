/**
 * `cronfence dev`: the whole system on one machine. Starts the emulator
 * unless AWS_ENDPOINT_URL is set, bootstraps, registers the example jobs,
 * runs scanners and workers as separate processes, stands in for the
 * per-minute EventBridge rule, and reports every execution.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { executionKey } from '../core/execution-key.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { distribution } from '../core/stats.ts';
import { tick } from '../engine/ticker.ts';
import { destroyAwsClients } from '../aws/clients.ts';
import { formatOutcome, isOutcome, ms, table } from '../cli/format.ts';
import { prepareDevEnvironment, registerExampleJobs } from './dev-setup.ts';
import { emulatorProfile, ensureAwsEndpoint } from './emulator.ts';
import { ReplicaFleet } from './fleet.ts';
import { createRuntime } from './wiring.ts';

export interface DevOptions {
  readonly scanners: number;
  readonly workers: number;
  /** Seconds to run; until Ctrl-C when omitted. */
  readonly durationSeconds?: number;
  /** One JSON object per lifecycle event instead of readable lines. */
  readonly json: boolean;
  /** Stand-in EventBridge rule interval. @default 60 */
  readonly tickSeconds: number;
  readonly stateDir: string;
  readonly write: (line: string) => void;
}

export interface DevJobSummary {
  readonly jobId: string;
  readonly committed: number;
  readonly ledgerRecords: number;
  readonly duplicateKeys: number;
  readonly workers: number;
}

export interface DevSummary {
  readonly events: Record<string, number>;
  /** AWS requests of all replicas, by service.Operation. */
  readonly requests: Record<string, number>;
  readonly startLag: ReturnType<typeof distribution>;
  readonly jobs: DevJobSummary[];
  readonly startedAt: number;
  readonly endedAt: number;
}

export async function runDev(options: DevOptions): Promise<DevSummary> {
  const say = (line: string): void => {
    if (!options.json) options.write(line);
  };
  say(process.env.AWS_ENDPOINT_URL ? `using AWS_ENDPOINT_URL=${process.env.AWS_ENDPOINT_URL}` : `starting the local AWS emulator (${emulatorProfile(process.env.CRONFENCE_EMULATOR)})…`);
  const endpoint = await ensureAwsEndpoint({ log: (line) => say(`  ${line}`) });
  const runtime = createRuntime();
  const statePath = path.join(options.stateDir, 'dev.json');
  const fleet = new ReplicaFleet({ logFile: path.join(options.stateDir, 'replicas.log'), onEvent: (event) => onEvent(event) });
  const counts: Record<string, number> = {};
  const lags = new Map<string, number>();
  const committedBy = new Map<string, Set<string>>();
  const onEvent = (event: LifecycleEvent): void => {
    counts[event.type] = (counts[event.type] ?? 0) + 1;
    if (options.json) return options.write(JSON.stringify(event));
    if (event.type === 'started' && event.startLagMs !== undefined) lags.set(event.executionKey, event.startLagMs);
    if (event.type === 'committed') {
      const workers = committedBy.get(event.jobId) ?? new Set<string>();
      committedBy.set(event.jobId, workers.add(event.worker));
    }
    if (isOutcome(event)) say(formatOutcome(event, lags.get(event.executionKey)));
  };
  let ticker: NodeJS.Timeout | undefined;
  const startedAt = Date.now();
  try {
    await prepareDevEnvironment(runtime);
    mkdirSync(options.stateDir, { recursive: true });
    writeFileSync(statePath, JSON.stringify({ endpoint: endpoint.endpoint, endpointEnv: endpoint.endpointEnv, pid: process.pid, prefix: runtime.config.prefix }));
    for (let i = 1; i <= options.scanners; i++) fleet.spawn('scanner', `scanner-${i}`);
    for (let i = 1; i <= options.workers; i++) fleet.spawn('worker', `worker-${i}`);
    await Promise.all(fleet.list().map((replica) => replica.ready));
    say(`${options.scanners} scanners and ${options.workers} workers running; logs in ${path.join(options.stateDir, 'replicas.log')}`);
    // Registered once the replicas are up, so no occurrence falls due while they boot.
    const jobs = await registerExampleJobs(runtime);
    say(`registered ${jobs.map((job) => `${job.id} (${job.schedule}, ${job.timeZone})`).join(', ')}`);
    say('time          job                    scheduled             start lag   worker     fence  outcome');
    await tick(runtime.scanQueue, runtime.config.shardCount);
    ticker = setInterval(() => void tick(runtime.scanQueue, runtime.config.shardCount).catch(() => {}), options.tickSeconds * 1000);
    await waitForEnd(options.durationSeconds);
  } finally {
    if (ticker) clearInterval(ticker);
    say('stopping replicas…');
    await fleet.stopAll();
  }
  const endedAt = Date.now();
  const summary: DevSummary = {
    events: counts,
    requests: fleet.requests,
    startLag: distribution([...lags.values()]),
    jobs: await summarizeJobs(runtime, committedBy, startedAt),
    startedAt,
    endedAt,
  };
  if (!options.json) printSummary(summary, options.write);
  destroyAwsClients(runtime.clients);
  rmSync(statePath, { force: true });
  await endpoint.stop();
  return summary;
}

async function summarizeJobs(runtime: ReturnType<typeof createRuntime>, committedBy: Map<string, Set<string>>, since: number): Promise<DevJobSummary[]> {
  const repository = runtime.jobs();
  const summaries: DevJobSummary[] = [];
  for (const job of await repository.list()) {
    const ledger = await repository.ledgerOf(job.id, since - 60_000);
    const keys = new Set(ledger.map((record) => executionKey(record.jobId, record.scheduledAt)));
    summaries.push({
      jobId: job.id,
      committed: ledger.filter((record) => record.outcome === 'SUCCEEDED').length,
      ledgerRecords: ledger.length,
      duplicateKeys: ledger.length - keys.size,
      workers: committedBy.get(job.id)?.size ?? 0,
    });
  }
  return summaries;
}

function printSummary(summary: DevSummary, write: (line: string) => void): void {
  const executions = summary.events.committed ?? 0;
  write('');
  write(`ran ${Math.round((summary.endedAt - summary.startedAt) / 1000)} s; events: ${JSON.stringify(summary.events)}`);
  write(`start lag: p50 ${ms(summary.startLag.p50)}, p99 ${ms(summary.startLag.p99)}, max ${ms(summary.startLag.max)} over ${summary.startLag.count} starts`);
  write(
    table([
      ['job', 'committed', 'ledger records', 'duplicate keys', 'workers used'],
      ...summary.jobs.map((job) => [job.jobId, job.committed, job.ledgerRecords, job.duplicateKeys, job.workers]),
    ]),
  );
  if (executions === 0) return;
  write('');
  write(`AWS requests by all replicas (scanners and workers), per committed execution (${executions}):`);
  write(
    table([
      ['request', 'count', 'per execution'],
      ...Object.entries(summary.requests)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, count]) => [name, count, (count / executions).toFixed(2)]),
    ]),
  );
}

function waitForEnd(durationSeconds: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      if (timer) clearTimeout(timer);
      resolve();
    };
    const timer = durationSeconds === undefined ? undefined : setTimeout(done, durationSeconds * 1000);
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
