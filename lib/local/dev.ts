/**
 * `cronfence dev`: the whole system on one machine. Starts the emulator
 * unless AWS_ENDPOINT_URL is set, bootstraps, registers the jobs (the
 * examples, or a user's jobs module), runs scanners and workers as separate
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
import { localConfig } from '../aws/config.ts';
import { describeJobsModule, type JobsModuleDescription } from '../package/describe-jobs-module.ts';
import { PACKAGE_ROOT } from '../package/package-files.ts';
import { DevReport, type DevSummary } from './dev-report.ts';
import { prepareDevEnvironment, prepareModuleEnvironment, registerExampleJobs, registerModuleJobs } from './dev-setup.ts';
import { emulatorProfile, ensureAwsEndpoint } from './emulator.ts';
import { startDevOutbox, type DevOutbox } from './dev-outbox.ts';
import { ReplicaFleet } from './fleet.ts';
import { createTickHandler } from '../lambda/handlers.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';

export type { DevJobSummary, DevSummary } from './dev-report.ts';

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
  /** A user's jobs module whose handlers the workers run. @default the example jobs */
  readonly jobsModule?: string;
  /** With `jobsModule`: the schedule of every job registered. @default the module's `schedules`, or every 5 seconds per handler */
  readonly schedule?: string;
}

export async function runDev(options: DevOptions): Promise<DevSummary> {
  const stop = stopSignal();
  const report = new DevReport(options);
  try {
    // A module that does not load fails before anything starts.
    const jobs = options.jobsModule ? describeJobsModule(options.jobsModule) : undefined;
    if (jobs) report.say(`jobs module ${jobs.path}: handlers ${jobs.handlers.join(', ')}`);
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
      const env = jobs ? await prepareModuleEnvironment(runtime, jobs) : await prepareDevEnvironment(runtime).then(() => ({}));
      mkdirSync(options.stateDir, { recursive: true });
      writeFileSync(
        statePath,
        JSON.stringify({
          endpoint: endpoint.endpoint,
          endpointEnv: endpoint.endpointEnv,
          pid: process.pid,
          prefix: runtime.config.prefix,
          jobsModule: jobs?.path,
        }),
      );
      fleet = new ReplicaFleet({
        logFile: path.join(options.stateDir, 'replicas.log'),
        onEvent: (event) => report.onEvent(event),
        env: { ...process.env, ...env },
        jobsModule: jobs?.path,
      });
      await startReplicas(fleet, options, report);
      outbox = await startDevOutbox(runtime, { withBank: jobs === undefined });
      if (!stop.signalled()) await run(runtime, jobs, options, report, stop, outbox.bank?.url);
    } finally {
      report.say('stopping replicas…');
      await fleet?.stopAll();
      if (outbox) report.say(await outbox.stop());
    }
    const summary = await report.summarize(runtime, fleet.requests);
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
async function run(
  runtime: Runtime,
  jobs: JobsModuleDescription | undefined,
  options: DevOptions,
  report: DevReport,
  stop: StopSignal,
  bankUrl?: string,
): Promise<void> {
  const registered = jobs ? await registerModuleJobs(runtime, jobs, options.schedule) : await registerExampleJobs(runtime, { bankUrl });
  if (bankUrl) report.say(`the settlements wire their payouts through the outbox to a local mock bank at ${bankUrl}`);
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
