/**
 * Density: what one scan window costs as the number of registered schedules
 * grows. At each level the jobs table holds N schedules spread over the next
 * day (daily crons) plus `due` schedules that fall in this window; one
 * scanner process scans every shard once. The wheel is keyed (shard, bucket),
 * so the items a scan touches should follow the due count, not N, and so
 * should the scanner's memory.
 */
import { fork } from 'node:child_process';
import { CronfenceError } from '../../lib/core/errors.ts';
import { bootstrap } from '../../lib/aws/bootstrap.ts';
import { destroyAwsClients } from '../../lib/aws/clients.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';
import { packageFile } from '../../lib/package/package-files.ts';
import { BENCH_NOOP } from './bench-jobs.ts';
import { sumValues } from '../meter/request-meter.ts';
import { dailyJobAt, firstOpenSecond, registerSchedules } from './register-schedules.ts';
import type { ScanProbeResult } from './scan-probe.ts';

const PROBE_ENTRY = packageFile('tools/bench/scan-probe.ts');
const HOUR_MS = 3_600_000;
/** Due schedules fire this far after the probe starts: inside its lookahead, after the scan starts. */
const DUE_IN_MS = 30_000;

export class ScanProbeError extends CronfenceError {
  override name = 'ScanProbeError';
}

export interface DensityOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Totals of registered schedules, ascending (each level adds to the previous). */
  readonly levels: readonly number[];
  readonly duePerLevel: number;
  readonly onProgress: (phase: string, done: number, total: number) => void;
}

export interface DensityLevel {
  readonly schedules: number;
  readonly due: number;
  readonly sent: number;
  readonly itemsRead: number;
  readonly itemsWritten: number;
  readonly itemsTouchedPerDueSlice: number;
  readonly dynamoRequests: number;
  readonly dynamoRequestsPerDueSlice: number;
  readonly writeRequestUnits: number;
  readonly readRequestUnits: number;
  readonly msPerShardMean: number;
  readonly msPerShardMax: number;
  readonly scannerRssBeforeMb: number;
  readonly scannerPeakRssMb: number;
  readonly scannerPeakHeapMb: number;
  readonly registerSeconds: number;
  /** What the scans reported failing (the first few). */
  readonly scanErrors: readonly string[];
}

export interface DensityResult {
  readonly shards: number;
  readonly levels: DensityLevel[];
}

export async function runDensity(options: DensityOptions): Promise<DensityResult> {
  const runtime = createRuntime({ env: options.env });
  const { config } = runtime;
  const levels: DensityLevel[] = [];
  try {
    await bootstrap(runtime.clients, config);
    let registered = 0;
    for (const [levelIndex, total] of options.levels.entries()) {
      const now = Date.now();
      const adding = Math.max(0, total - registered);
      const from = registered;
      const registerStarted = Date.now();
      // Idle schedules: one a day, at a time spread over the day after the next hour (never in this window).
      await registerSchedules(
        runtime.clients.dynamo,
        config,
        adding,
        (i) =>
          dailyJobAt(`idle-${from + i}`, now + HOUR_MS + (((from + i) * 7919 * 1000) % (22 * HOUR_MS)), config.shardCount, BENCH_NOOP, now),
        (written) => options.onProgress(`density: registering ${total.toLocaleString('en-US')} schedules`, from + written, total),
      );
      registered += adding;
      const dueAt = await firstOpenSecond(runtime.wheel, config.shardCount, Date.now() + DUE_IN_MS);
      await registerSchedules(runtime.clients.dynamo, config, options.duePerLevel, (i) =>
        dailyJobAt(`due-${levelIndex}-${i}`, dueAt, config.shardCount, BENCH_NOOP, now),
      );
      // The probe's scan reaches them from DUE_IN_MS before (its lookahead is longer: run-bench.ts).
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, dueAt - DUE_IN_MS - Date.now())));
      const registerSeconds = (Date.now() - registerStarted) / 1000;
      options.onProgress(`density: scanning ${config.shardCount} shards at ${total.toLocaleString('en-US')}`, total, total);
      const probe = await runScanProbe(options.env);
      levels.push(summarize(total, options.duePerLevel, probe, registerSeconds));
    }
  } finally {
    destroyAwsClients(runtime.clients);
  }
  return { shards: config.shardCount, levels };
}

function summarize(schedules: number, due: number, probe: ScanProbeResult, registerSeconds: number): DensityLevel {
  const sent = probe.shards.reduce((sum, s) => sum + s.report.sent, 0);
  const m = probe.meter;
  const dynamoRequests = Object.entries(m.requests)
    .filter(([name]) => name.startsWith('dynamo.'))
    .reduce((sum, [, n]) => sum + n, 0);
  const ms = probe.shards.map((s) => s.ms);
  const perSlice = (n: number): number => (sent === 0 ? 0 : n / sent);
  const mb = (bytes: number): number => round(bytes / 1_048_576, 1);
  return {
    schedules,
    due,
    sent,
    itemsRead: m.itemsRead,
    itemsWritten: m.itemsWritten,
    itemsTouchedPerDueSlice: round(perSlice(m.itemsRead + m.itemsWritten), 2),
    dynamoRequests,
    dynamoRequestsPerDueSlice: round(perSlice(dynamoRequests), 2),
    writeRequestUnits: sumValues(m.writeUnits),
    readRequestUnits: sumValues(m.readUnits),
    msPerShardMean: Math.round(ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length)),
    msPerShardMax: Math.round(Math.max(0, ...ms)),
    scannerRssBeforeMb: mb(probe.rssBeforeBytes),
    scannerPeakRssMb: mb(probe.peakRssBytes),
    scannerPeakHeapMb: mb(probe.peakHeapUsedBytes),
    registerSeconds: round(registerSeconds, 1),
    scanErrors: probe.errors,
  };
}

function runScanProbe(env: NodeJS.ProcessEnv): Promise<ScanProbeResult> {
  return new Promise((resolve, reject) => {
    const child = fork(PROBE_ENTRY, [], {
      execArgv: ['--import', import.meta.resolve('tsx'), '--no-warnings=ExperimentalWarning', '--expose-gc'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env,
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    let result: ScanProbeResult | undefined;
    child.on('message', (message: { kind: string; result?: ScanProbeResult }) => {
      if (message.kind === 'result') result = message.result;
    });
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new ScanProbeError(`scan probe exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
