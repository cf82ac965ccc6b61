/**
 * `cronfence dev`: the whole system on one machine. Starts the emulator
 * unless AWS_ENDPOINT_URL is set, bootstraps, registers the jobs (a user's
 * jobs module; in the repository, `npm start`'s examples), runs scanners and workers as separate
 * processes, stands in for the per-minute EventBridge rule (the tick: scan
 * requests and the dead-man's switch), and reports
 * every execution.
 *
 * Stopping (Ctrl-C, SIGTERM, or --duration): the replicas and the emulator
 * run in process groups of their own, so a terminal's Ctrl-C reaches only
 * this process, which stops the replicas, reads the summary from the still
 * running emulator, and then stops the emulator.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { destroyAwsClients } from '../aws/clients.ts';
import { bootstrap } from '../aws/bootstrap.ts';
import { localConfig } from '../aws/config.ts';
import { CronfenceError } from '../core/errors.ts';
import { describeJobsModule } from '../package/describe-jobs-module.ts';
import { PACKAGE_ROOT } from '../package/package-files.ts';
import { DevReport, type DevSummary } from './dev-report.ts';
import { moduleDevJobs, type DevJobs } from './dev-setup.ts';
import { emulatorProfile, ensureAwsEndpoint } from './emulator.ts';
import { startDevOutbox, type DevOutbox } from './dev-outbox.ts';
import { ReplicaFleet, type FleetOptions } from './fleet.ts';
import { createTickHandler } from '../lambda/handlers.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';

export type { DevJobSummary, DevSummary } from './dev-report.ts';
export type { DevJobs } from './dev-setup.ts';

/** What the repository's tools add to `cronfence dev` (tools/dev): the example jobs by default, and the request meter. */
export interface DevAdditions {
  /** The jobs without `--jobs`. */
  readonly defaultJobs: () => DevJobs;
  /** The replica entry the fleet forks (one that calls startReplica). */
  readonly replicaEntry: string;
  /** Messages of the tools attached to the replicas. */
  readonly onToolMessage: NonNullable<FleetOptions['onToolMessage']>;
  /** Lines printed after the summary (not under --json). */
  readonly summaryLines: (summary: DevSummary) => string[];
}

/** `cronfence dev` without a jobs module to run. */
export class DevJobsMissingError extends CronfenceError {
  override name = 'DevJobsMissingError';
  constructor() {
    super('dev needs --jobs <module>: your jobs module (defineJob handlers or a `registry`), whose handlers the workers run');
  }
}

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
  /** A user's jobs module whose handlers the workers run; required unless `additions` give default jobs. */
  readonly jobsModule?: string;
  /** With `jobsModule`: the schedule of every job registered. @default the module's `schedules`, or every 5 seconds per handler */
  readonly schedule?: string;
  /** The repository's tools (tools/dev). @default none: the published command */
  readonly additions?: DevAdditions;
}

/** @throws {DevJobsMissingError} without `jobsModule` or default jobs, before anything starts or is written. */
export async function runDev(options: DevOptions): Promise<DevSummary> {
  // A module that does not load, or none, fails before anything starts.
  const module = options.jobsModule ? describeJobsModule(options.jobsModule) : undefined;
  const jobs = module ? moduleDevJobs(module, options.schedule) : options.additions?.defaultJobs();
  if (!jobs) throw new DevJobsMissingError();
  const stop = stopSignal();
  const report = new DevReport(options);
  try {
    if (module) report.say(`jobs module ${module.path}: handlers ${module.handlers.join(', ')}`);
    report.say(
      process.env.AWS_ENDPOINT_URL
        ? `using AWS_ENDPOINT_URL=${process.env.AWS_ENDPOINT_URL}`
        : `starting the local AWS emulator (${emulatorProfile(localConfig().emulator)})…`,
    );
    const endpoint = await ensureAwsEndpoint({ repoRoot: PACKAGE_ROOT, log: (line) => report.say(`  ${line}`) });
    report.begin();
    // The parent stands in for the tick Lambda, the dead-man's switch included: its `stale` events are reported here.
    const runtime = createRuntime({ sinks: [{ emit: (event) => report.onEvent(event) }] });
    const statePath = path.join(options.stateDir, 'dev.json');
    let fleet: ReplicaFleet | undefined;
    let outbox: DevOutbox | undefined;
    try {
      await bootstrap(runtime.clients, runtime.config);
      const env = await jobs.prepare(runtime, (line) => report.say(line));
      mkdirSync(options.stateDir, { recursive: true });
      writeFileSync(
        statePath,
        JSON.stringify({
          endpoint: endpoint.endpoint,
          endpointEnv: endpoint.endpointEnv,
          pid: process.pid,
          prefix: runtime.config.prefix,
          jobsModule: jobs.modulePath,
        }),
      );
      fleet = new ReplicaFleet({
        logFile: path.join(options.stateDir, 'replicas.log'),
        onEvent: (event) => report.onEvent(event),
        env: { ...process.env, ...env },
        jobsModule: jobs.modulePath,
        ...(options.additions && { entry: options.additions.replicaEntry, onToolMessage: options.additions.onToolMessage }),
      });
      await startReplicas(fleet, options, report);
      outbox = startDevOutbox(runtime);
      if (!stop.signalled()) await run(runtime, jobs, options, report, stop);
    } finally {
      report.say('stopping replicas…');
      await fleet?.stopAll();
      if (outbox) report.say(await outbox.stop());
      const stopped = await jobs.stop?.();
      if (stopped) report.say(stopped);
    }
    const summary = await report.summarize(runtime);
    for (const line of options.additions?.summaryLines(summary) ?? []) report.say(line);
    destroyAwsClients(runtime.clients);
    rmSync(statePath, { force: true });
    await endpoint.stop();
    return summary;
  } finally {
    stop.dispose();
  }
}

async function startReplicas(fleet: ReplicaFleet, options: DevOptions, report: DevReport): Promise<void> {
  for (let i = 1; i <= options.scanners; i++) fleet.spawn('scanner', `scanner-${i}`);
  for (let i = 1; i <= options.workers; i++) fleet.spawn('worker', `worker-${i}`);
  await fleet.whenReady();
  report.say(`${options.scanners} scanners and ${options.workers} workers running; logs in ${path.join(options.stateDir, 'replicas.log')}`);
}

/** Registers the jobs once the replicas are up (so no occurrence falls due while they boot), then ticks until the end. */
async function run(runtime: Runtime, jobs: DevJobs, options: DevOptions, report: DevReport, stop: StopSignal): Promise<void> {
  const registered = await jobs.register(runtime, (line) => report.say(line));
  report.say(`registered ${registered.map((job) => `${job.id} (${job.schedule}, ${job.timeZone})`).join(', ')}`);
  report.outcomesFollow(registered.map((job) => job.id));
  const onTick = createTickHandler(runtime, {
    info: () => {},
    error: (message, details) => report.say(`${message} ${JSON.stringify(details)}`),
  });
  await onTick();
  const ticker = setInterval(() => void onTick().catch(() => {}), options.tickSeconds * 1000);
  try {
    await stop.wait(options.durationSeconds);
  } finally {
    clearInterval(ticker);
  }
}

interface StopSignal {
  signalled(): boolean;
  /** Until SIGINT or SIGTERM (or one came already), or `seconds`. */
  wait(seconds: number | undefined): Promise<void>;
  dispose(): void;
}

/** SIGINT and SIGTERM from the start: one that comes while starting up ends the run once start-up is done. */
function stopSignal(): StopSignal {
  let received = false;
  let wake: () => void = () => {};
  const onSignal = (): void => {
    received = true;
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signalled: () => received,
    wait: (seconds) =>
      new Promise<void>((resolve) => {
        if (received) return resolve();
        const timer = seconds === undefined ? undefined : setTimeout(resolve, seconds * 1000);
        wake = () => {
          if (timer) clearTimeout(timer);
          resolve();
        };
      }),
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
