/** `cronfence jobs add|list|get|pause|resume|rm`. */
import { Command, InvalidArgumentError } from 'commander';
import type { StoredJob } from '../core/job-record.ts';
import { nextOccurrenceOf } from '../core/job-lifecycle.ts';
import { START_PRECISIONS, type StartPrecision } from '../core/start-precision.ts';
import type { JobRepository } from '../engine/job-repository.ts';
import { describeJobsModule } from '../package/describe-jobs-module.ts';
import { table } from '../local/format.ts';
import type { OperatorActions } from '../aws/operator-actions.ts';
import { addOperatorCommands } from './operator-commands.ts';
import { jobDetail, listRow, nextLabel } from './job-view.ts';
import { parsePayloadFlag } from './payload-flag.ts';
import { parseDurationFlag } from './time-flags.ts';

/**
 * @param repository the job repository, checking handler names against `knownHandlers` when given
 *   (`jobs add --jobs <module>`: the module's), else against the caller's default list.
 */
export function jobsCommand(
  repository: (knownHandlers?: readonly string[]) => JobRepository,
  write: (line: string) => void,
  describeModule: (file: string) => { readonly handlers: readonly string[] } = describeJobsModule,
  operator?: () => OperatorActions,
): Command {
  const jobs = new Command('jobs').description('create, inspect, trigger, backfill, pause, resume and delete scheduled jobs');

  jobs
    .command('add')
    .description('create a job, or replace the job with that id (validated before anything is written)')
    .argument('<id>', 'job id: letters, digits, "_", "." and "-"')
    .requiredOption(
      '-s, --schedule <expr>',
      'cron (5 fields, or 6 with seconds first, e.g. "*/5 * * * * *"), "rate(5 minutes)" or one-time "at(2026-12-24T18:00:00)" in --tz',
    )
    .option('--handler <name>', 'handler name (one --jobs exports, or the module a running `cronfence dev` runs)')
    .option('--jobs <module>', 'your jobs module: --handler must be one it exports')
    .option('-z, --tz <zone>', 'IANA time zone', 'UTC')
    .option('--dst-gap <policy>', 'a local time DST skips: "shift" (run it moved past the gap) or "skip" (default shift)')
    .option('--dst-repeat <policy>', 'a local time DST repeats: "once" (its first occurrence) or "twice" (default once)')
    .option('--payload <json>', 'JSON object handed to the handler, or @file to read it from a file', (value) => parsePayloadFlag(value))
    .option('--lease-ms <ms>', 'lease length', parseInteger)
    .option('--heartbeat-ms <ms>', 'lease renewal interval', parseInteger)
    .option('--max-attempts <n>', 'attempts before DEAD', parseInteger)
    .option('--timeout-ms <ms>', 'handler timeout', parseInteger)
    .option('--paused', 'create it paused')
    .option('--group <name>', 'a group for bulk operations (jobs pause --group)')
    .option(
      '--catch-up <duration>',
      'after downtime, occurrences older than this are recorded MISSED, not run, e.g. 10m, 2h (default 10m)',
      parseDurationFlag,
    )
    .option('--misfire <policy>', 'after downtime, run the due occurrences "all", the "latest" only, or "none" (default all)')
    .option(
      '--overlap <policy>',
      'an occurrence due while the previous still runs: "allow", "skip", "bufferOne", "bufferAll" or "replace" (default allow)',
    )
    .option('--jitter <duration>', 'start each occurrence up to this much later, a fixed offset per job, e.g. 90s')
    .option(
      '--precision <precision>',
      'start "exact" on the second (the worker waits for it) or "within-second" after it (no wait: cheaper) (default exact)',
      parseStartPrecision,
    )
    .option('--after-run <what>', 'a one-time at(...) job after its run: "complete" (keep it) or "delete" (default complete)')
    .action(async (id: string, flags: AddFlags) => {
      const chosen = {
        leaseMs: flags.leaseMs,
        heartbeatMs: flags.heartbeatMs,
        maxAttempts: flags.maxAttempts,
        timeoutMs: flags.timeoutMs,
        catchUpWindowMs: flags.catchUp,
        misfire: flags.misfire,
        overlap: flags.overlap,
        afterOneTime: flags.afterRun,
        startPrecision: flags.precision,
      };
      const policies = Object.fromEntries(Object.entries(chosen).filter(([, value]) => value !== undefined));
      // Validated by parseJobSpec in put, which names the bad value (`invalid dst.gap "later": ...`).
      const dst = Object.fromEntries(
        Object.entries({ gap: flags.dstGap, repeat: flags.dstRepeat }).filter(([, value]) => value !== undefined),
      );
      const { job, created } = await repository(flags.jobs === undefined ? undefined : describeModule(flags.jobs).handlers).put({
        id,
        schedule: flags.schedule,
        timeZone: flags.tz,
        ...(Object.keys(dst).length > 0 && { dst }),
        handler: flags.handler ?? id,
        enabled: !flags.paused,
        ...(flags.group !== undefined && { group: flags.group }),
        ...(flags.payload && { payload: flags.payload }),
        ...(Object.keys(policies).length > 0 && { policies }),
        ...(flags.jitter !== undefined && { jitter: flags.jitter }),
      });
      write(`${created ? 'created' : 'updated'} ${describe(job)}`);
    });

  jobs
    .command('list')
    .option('--json', 'one JSON object per job')
    .action(async (flags: { json?: boolean }) => {
      const all = await repository().list();
      if (flags.json) return all.forEach((job) => write(JSON.stringify(job)));
      write(
        table([
          ['id', 'schedule', 'time zone', 'handler', 'state', 'next fire (UTC)', 'version', 'origin', 'group'],
          ...all.map((job) => listRow(job)),
        ]),
      );
    });

  jobs
    .command('get')
    .argument('<id>')
    .option('--json', 'the stored job as JSON (times in epoch ms), for scripts')
    .action(async (id: string, flags: { json?: boolean }) => {
      const job = await repository().require(id);
      // A job a scan set aside (its stored row cannot be planned or sent) says so, with the reason.
      const setAside = await repository().setAsideOf(job);
      write(flags.json ? JSON.stringify(setAside ? { ...job, setAside } : job, null, 2) : jobDetail(job, setAside));
    });

  if (operator) addOperatorCommands(jobs, operator, write);

  jobs
    .command('rm')
    .argument('<id>')
    .action(async (id: string) => {
      const { deleted, skipped } = await repository().delete(id);
      write(deleted ? `deleted ${id}; ${skipped} pending slices skipped; history kept` : `no job ${JSON.stringify(id)}`);
      if (!deleted) process.exitCode = 1;
    });

  return jobs;
}

interface AddFlags {
  schedule: string;
  handler?: string;
  jobs?: string;
  tz: string;
  dstGap?: string;
  dstRepeat?: string;
  payload?: Record<string, unknown>;
  leaseMs?: number;
  heartbeatMs?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  catchUp?: number;
  paused?: boolean;
  group?: string;
  misfire?: string;
  overlap?: string;
  jitter?: string;
  afterRun?: string;
  precision?: StartPrecision;
}

function describe(job: StoredJob): string {
  return `${job.id}: "${job.schedule}" in ${job.timeZone} (DST ${job.dst.gap}/${job.dst.repeat}), handler ${job.handler}, next ${nextLabel(nextOccurrenceOf(job, Date.now()))}, version ${job.version}`;
}

/** `--precision`: refused by commander, which names the flag and the value, before anything is written. */
function parseStartPrecision(value: string): StartPrecision {
  const precision = START_PRECISIONS.find((known) => known === value);
  if (precision === undefined) throw new InvalidArgumentError(`${JSON.stringify(value)} is not "exact" or "within-second"`);
  return precision;
}

export function parseInteger(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError(`${JSON.stringify(value)} is not a whole number`);
  return parsed;
}

/** A whole-number flag's parser that also refuses values below `min`, saying why (commander names the flag). */
export function wholeNumberAtLeast(min: number, why: string): (value: string) => number {
  return (value) => {
    const parsed = parseInteger(value);
    if (parsed < min) throw new InvalidArgumentError(`${parsed} is below ${min}: ${why}`);
    return parsed;
  };
}
