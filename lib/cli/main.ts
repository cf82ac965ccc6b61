/** The `cronfence` command line. */
import path from 'node:path';
import { Command, Option } from 'commander';
import { CronfenceError } from '../core/errors.ts';
import { bootstrap } from '../aws/bootstrap.ts';
import { localConfig } from '../aws/config.ts';
import { tick } from '../engine/ticker.ts';
import { registry } from '../example-jobs/index.ts';
import { PACKAGE_ROOT } from '../package/package-files.ts';
import { runDev } from '../local/dev.ts';
import { DEFAULT_DEV_SCHEDULE } from '../local/dev-setup.ts';
import { startEmulator, EmulatorSetupError, EmulatorStartError } from '../local/emulator.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';
import { devJobsModuleHandlers, useDevEndpointIfRunning } from './endpoint.ts';
import { benchCommand } from './bench-command.ts';
import { chaosCommand } from './chaos-command.ts';
import { jobsCommand, parseInteger } from './jobs-command.ts';
import { runsCommand } from './runs-command.ts';
import { verifyCommand } from './verify-command.ts';

const stateDir = path.resolve(localConfig().stateDir);
const write = (line: string): void => void process.stdout.write(`${line}\n`);

let runtime: Runtime | undefined;
const lazyRuntime = (): Runtime => {
  if (!runtime) {
    useDevEndpointIfRunning(stateDir);
    runtime = createRuntime();
  }
  return runtime;
};

const program = new Command('cronfence')
  .description('Serverless distributed cron for AWS: every scheduled slice committed exactly once.')
  .showHelpAfterError();

program
  .command('dev')
  .description('run the emulator, scanners, workers and your jobs module (or the example jobs) locally')
  .addOption(new Option('--scanners <n>', 'scanner replicas').argParser(parseInteger).default(3))
  .addOption(new Option('--workers <n>', 'worker replicas').argParser(parseInteger).default(3))
  .addOption(new Option('--duration <seconds>', 'stop after this long (default: until Ctrl-C)').argParser(parseInteger))
  .addOption(new Option('--tick <seconds>', 'interval of the stand-in EventBridge rule').argParser(parseInteger).default(60))
  .option('--json', 'one JSON object per lifecycle event (a documented interface: docs/events.md)')
  .option('--jobs <module>', 'your jobs module (defineJob handlers or a `registry`; optional `schedules`, `tables`): the workers run its handlers')
  .option('--schedule <cron>', `with --jobs: the schedule of every job it registers (default: the module's \`schedules\`, or "${DEFAULT_DEV_SCHEDULE}" per handler)`)
  .action(async (flags: { scanners: number; workers: number; duration?: number; tick: number; json?: boolean; jobs?: string; schedule?: string }) => {
    await runDev({
      scanners: flags.scanners,
      workers: flags.workers,
      durationSeconds: flags.duration,
      tickSeconds: flags.tick,
      json: flags.json ?? false,
      stateDir,
      write,
      ...(flags.jobs !== undefined && { jobsModule: flags.jobs }),
      ...(flags.schedule !== undefined && { schedule: flags.schedule }),
    });
  });

program
  .command('emulator')
  .description('run the local AWS emulator (moto) until Ctrl-C, for scripts and other tools')
  .action(async () => {
    const emulator = await startEmulator({ repoRoot: PACKAGE_ROOT });
    write(`emulator listening; in another shell:\n  export AWS_ENDPOINT_URL=${emulator.endpoint} AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test`);
    // The emulator child is unreferenced (it must not keep other commands alive); this command lives for it.
    const keepAlive = setInterval(() => {}, 60_000);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    clearInterval(keepAlive);
    await emulator.stop();
  });

program
  .command('bootstrap')
  .description('create the tables, queues and event bus (idempotent)')
  .action(async () => {
    const result = await bootstrap(lazyRuntime().clients, lazyRuntime().config);
    write(JSON.stringify(result, null, 2));
  });

program
  .command('tick')
  .description('put one scan request per shard on the scan queue (what the per-minute rule does)')
  .action(async () => write(`queued scans of ${await tick(lazyRuntime().scanQueue, lazyRuntime().config.shardCount)} shards`));

// Handler names are checked against --jobs, else the module a running `cronfence dev --jobs` runs, else the examples.
program.addCommand(
  jobsCommand((known) => lazyRuntime().jobs(known ?? devJobsModuleHandlers(stateDir) ?? registry.names()), write, undefined, () => lazyRuntime().operator()),
);
program.addCommand(runsCommand(() => lazyRuntime().jobs(), write));
program.addCommand(verifyCommand(() => ({ dynamo: lazyRuntime().clients.dynamo, config: lazyRuntime().config }), write));
program.addCommand(chaosCommand(write));
program.addCommand(benchCommand(write));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CronfenceError || error instanceof EmulatorSetupError || error instanceof EmulatorStartError) {
    process.stderr.write(`cronfence: ${error.message}\n`);
    process.exitCode = 1;
  } else {
    throw error;
  }
} finally {
  if (runtime) {
    runtime.clients.dynamo.destroy();
    runtime.clients.sqs.destroy();
    runtime.clients.events.destroy();
  }
}
