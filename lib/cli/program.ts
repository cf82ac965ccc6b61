/**
 * The `cronfence` command line: the published commands (main.ts runs them;
 * the repository's tools/cli/main.ts adds its drill and bench beside them,
 * and the example jobs and the request meter to `dev`).
 */
import path from 'node:path';
import { Command } from 'commander';
import { CronfenceError } from '../core/errors.ts';
import { bootstrap } from '../aws/bootstrap.ts';
import { localConfig } from '../aws/config.ts';
import { tick } from '../engine/ticker.ts';
import { PACKAGE_ROOT } from '../package/package-files.ts';
import { startEmulator, EmulatorSetupError, EmulatorStartError } from '../local/emulator.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';
import { devJobsModuleHandlers, useDevEndpointIfRunning } from './endpoint.ts';
import { endQuietlyOnBrokenPipe } from './broken-pipe.ts';
import type { DevAdditions } from '../local/dev.ts';
import { devCommand } from './dev-command.ts';
import { jobsCommand } from './jobs-command.ts';
import { runsCommand } from './runs-command.ts';
import { verifyCommand } from './verify-command.ts';

/** A command beyond the published ones, given where its output goes. */
export type ExtraCommand = (write: (line: string) => void) => Command;

/** What the repository's tools add to the published commands (tools/cli/main.ts). */
export interface CliAdditions {
  /** Added after the published commands. */
  readonly commands?: readonly ExtraCommand[];
  /** `cronfence dev`'s default jobs and tools. */
  readonly dev?: DevAdditions;
  /** The handlers `jobs add` checks against without --jobs and no running `cronfence dev --jobs`. @default unchecked */
  readonly defaultHandlers?: readonly string[];
}

/** Parses process.argv and runs the command it names. */
export async function runCronfence(additions: CliAdditions = {}): Promise<void> {
  endQuietlyOnBrokenPipe(process.stdout);

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

  program.addCommand(devCommand(write, stateDir, additions.dev));

  program
    .command('emulator')
    .description('run the local AWS emulator (moto) until Ctrl-C, for scripts and other tools')
    .action(async () => {
      const emulator = await startEmulator({ repoRoot: PACKAGE_ROOT });
      write(
        `emulator listening; in another shell:\n  export AWS_ENDPOINT_URL=${emulator.endpoint} AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test`,
      );
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

  // Handler names are checked against --jobs, else the module a running `cronfence dev --jobs` runs, else the tools' default.
  program.addCommand(
    jobsCommand(
      (known) => lazyRuntime().jobs(known ?? devJobsModuleHandlers(stateDir) ?? additions.defaultHandlers),
      write,
      undefined,
      () => lazyRuntime().operator(),
    ),
  );
  program.addCommand(runsCommand(() => lazyRuntime().jobs(), write));
  program.addCommand(verifyCommand(() => ({ dynamo: lazyRuntime().clients.dynamo, config: lazyRuntime().config }), write));
  for (const command of additions.commands ?? []) program.addCommand(command(write));

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
}
