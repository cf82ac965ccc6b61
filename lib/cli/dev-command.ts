/** `cronfence dev`: the emulator, scanners, workers and the user's jobs module (in the repository, or the example jobs), locally. */
import { Command, Option } from 'commander';
import { runDev, type DevAdditions } from '../local/dev.ts';
import { DEFAULT_DEV_SCHEDULE } from '../local/dev-setup.ts';
import { wholeNumberAtLeast } from './jobs-command.ts';

export function devCommand(write: (line: string) => void, stateDir: string, additions?: DevAdditions): Command {
  return new Command('dev')
    .description(`run the emulator, scanners, workers and your jobs module${additions ? ' (or the example jobs)' : ''} locally`)
    .addOption(new Option('--scanners <n>', 'scanner replicas').argParser(wholeNumberAtLeast(1, 'nothing would create slices')).default(3))
    .addOption(new Option('--workers <n>', 'worker replicas').argParser(wholeNumberAtLeast(1, 'nothing would run the jobs')).default(3))
    .addOption(
      new Option('--duration <seconds>', 'stop after this long (default: until Ctrl-C)').argParser(
        wholeNumberAtLeast(1, 'the run would end before it began'),
      ),
    )
    .addOption(
      new Option('--tick <seconds>', 'interval of the stand-in EventBridge rule')
        .argParser(wholeNumberAtLeast(1, 'the rule would never wait between scans'))
        .default(60),
    )
    .option('--json', 'one JSON object per lifecycle event (a documented interface: docs/events.md)')
    .option(
      '--jobs <module>',
      `your jobs module (defineJob handlers or a \`registry\`; optional \`schedules\`, \`tables\`): the workers run its handlers${additions ? ' (default: the example jobs)' : ' (required)'}`,
    )
    .option(
      '--schedule <cron>',
      `with --jobs: the schedule of every job it registers (default: the module's \`schedules\`, or "${DEFAULT_DEV_SCHEDULE}" per handler)`,
    )
    .action(
      async (
        flags: { scanners: number; workers: number; duration?: number; tick: number; json?: boolean; jobs?: string; schedule?: string },
        command: Command,
      ) => {
        // It reschedules the module's jobs; without one (the repository's examples) it would be ignored, unchecked.
        if (flags.schedule !== undefined && flags.jobs === undefined) {
          command.error(
            `error: option '--schedule <cron>' ${JSON.stringify(flags.schedule)} needs --jobs: it sets the schedule of the module's jobs`,
          );
        }
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
          ...(additions && { additions }),
        });
      },
    );
}
