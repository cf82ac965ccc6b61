/**
 * `cronfence jobs trigger|backfill|pause|resume`: operator actions, each
 * recorded with who (`--actor`, else CRONFENCE_ACTOR, else USER) and why
 * (`--reason`). Values are checked by lib/core (operator.ts,
 * backfill-plan.ts), whose errors name the field and the value.
 */
import { randomUUID } from 'node:crypto';
import { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { CronfenceError } from '../core/errors.ts';
import { isoInstant, isoSecond } from '../core/execution-key.ts';
import { nextOccurrenceOf } from '../core/job-lifecycle.ts';
import { parseOperatorInstant } from '../core/operator.ts';
import { parseRate } from '../core/backfill-plan.ts';
import type { JobChangeResult } from '../engine/job-repository.ts';
import type { OperatorActions, BackfillProgress, OperatorChangeResult } from '../aws/operator-actions.ts';
import type { StoredJob } from '../core/job-record.ts';
import { operatorActor } from '../aws/config.ts';
import { payloadText } from './payload-flag.ts';
import { parseDuration } from './time-flags.ts';

export interface OperatorCommandOptions {
  readonly env?: Record<string, string | undefined>;
  /** Where the backfill's progress bar goes; a bar is drawn only on a terminal. @default process.stderr */
  readonly progress?: NodeJS.WriteStream;
  readonly now?: () => number;
}

interface ActorFlags {
  actor?: string;
  reason?: string;
}

/** Adds the operator actions to `jobs`. */
export function addOperatorCommands(
  jobs: Command,
  operator: () => OperatorActions,
  write: (line: string) => void,
  options: OperatorCommandOptions = {},
): void {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const actorOf = (flags: ActorFlags) => ({
    actor: operatorActor(flags.actor, env),
    ...(flags.reason !== undefined && { reason: flags.reason }),
  });

  withActor(jobs.command('trigger'))
    .description('run the job once now, in an extra slot with its own execution key (once per --request-id, however often retried)')
    .argument('<id>', 'job id')
    .option('--payload <json>', "this slot's payload, a JSON object or @file (default: the job's)", (value) => payloadText(value))
    .option('--request-id <id>', 'names this request: the same id again finds the same slot (default: a new one, printed)')
    .action(async (id: string, flags: ActorFlags & { payload?: string; requestId?: string }) => {
      const requestId = flags.requestId ?? randomUUID();
      const result = await operator().trigger(id, {
        ...actorOf(flags),
        requestId,
        ...(flags.payload !== undefined && { payload: flags.payload }),
      });
      const at = isoInstant(result.key.scheduledAt);
      write(
        result.created
          ? `triggered ${id}: slot ${at}, execution key ${result.executionKey}, request id ${requestId} (retry with --request-id ${requestId}: it runs once)`
          : `request ${requestId} already triggered ${id}: slot ${at}, execution key ${result.executionKey}, now ${result.status ?? 'gone'}; nothing new`,
      );
    });

  withActor(jobs.command('backfill'))
    .description('run each past occurrence in [--from, --to) that has no slice yet, once (run again, it runs nothing already there)')
    .argument('<id>', 'job id')
    .requiredOption('--from <time>', 'ISO time with a zone (2026-12-01T00:00:00Z), epoch ms, or a duration ago (2h)')
    .requiredOption('--to <time>', 'same forms; at most now')
    .option('--rate <n/s>', 'slots written per second, e.g. 5/s or 30/m (default: as fast as the store takes them)')
    .action(async (id: string, flags: ActorFlags & { from: string; to: string; rate?: string }) => {
      const from = parseTimeFlag('--from', flags.from, now(), -1);
      const to = parseTimeFlag('--to', flags.to, now(), -1);
      const ratePerSecond = flags.rate === undefined ? undefined : parseRate(flags.rate);
      const bar = progressBar(options.progress ?? process.stderr);
      try {
        const result = await operator().backfill(id, {
          ...actorOf(flags),
          from,
          to,
          ...(ratePerSecond !== undefined && { ratePerSecond }),
          onProgress: bar.update,
        });
        bar.stop();
        write(
          `backfill of ${id} from ${isoSecond(from)} to ${isoSecond(to)}: ${result.total} occurrences, ${result.created} enqueued, ` +
            `${result.alreadyFinal} already final, ${result.alreadyLive} already live (left as they are)`,
        );
      } finally {
        bar.stop();
      }
    });

  withActor(jobs.command('pause'))
    .description('pause a job (or a --group): pending slices are skipped; with --until it resumes by itself then')
    .argument('[id]', 'job id (or --group)')
    .option('--group <name>', 'every job of this group')
    .option('--until <time>', 'resume by itself at this time: ISO with a zone, epoch ms, or a duration from now (30m)')
    .action(async (id: string | undefined, flags: ActorFlags & { group?: string; until?: string }) => {
      const until = flags.until === undefined ? undefined : parseTimeFlag('--until', flags.until, now(), 1);
      const request = { ...actorOf(flags), ...(until !== undefined && { until }) };
      const target = oneTarget(id, flags.group);
      const results = 'id' in target ? [await operator().pause(target.id, request)] : await operator().pauseGroup(target.group, request);
      for (const result of results)
        write(
          result.changed ? describePause(result) : `${result.job.id} was already paused so (${describeUntil(result.job)}); nothing changed`,
        );
      if (!('id' in target)) groupSummary('paused', target.group, results, write);
    });

  withActor(jobs.command('resume'))
    .description('resume a paused job (or a --group) from its next occurrence')
    .argument('[id]', 'job id (or --group)')
    .option('--group <name>', 'every job of this group')
    .action(async (id: string | undefined, flags: ActorFlags & { group?: string }) => {
      const target = oneTarget(id, flags.group);
      const results =
        'id' in target ? [await operator().resume(target.id, actorOf(flags))] : await operator().resumeGroup(target.group, actorOf(flags));
      for (const { job, changed } of results) {
        const next = isoSecond(nextOccurrenceOf(job, Date.now()));
        write(
          changed
            ? `resumed ${job.id}: next ${next}, by ${job.resumed?.actor ?? '?'}`
            : `${job.id} was not paused; nothing changed (next ${next})`,
        );
      }
      if (!('id' in target)) groupSummary('resumed', target.group, results, write);
    });
}

function withActor(command: Command): Command {
  return command
    .option('--reason <text>', 'why (recorded with the actor; required for pause)')
    .option('--actor <name>', 'who (default: $CRONFENCE_ACTOR, else $USER)');
}

/** An operator time: ISO with a zone, epoch ms, or a duration `direction` (-1 ago, +1 ahead) of now. */
function parseTimeFlag(field: string, value: string, now: number, direction: 1 | -1): number {
  const duration = parseDuration(value);
  return duration !== undefined ? now + direction * duration : parseOperatorInstant(field, value);
}

function oneTarget(
  id: string | undefined,
  group: string | undefined,
): { readonly id: string; readonly group?: undefined } | { readonly group: string } {
  if (id !== undefined && group !== undefined)
    throw new CronfenceError(`give a job id or --group, not both (got ${JSON.stringify(id)} and --group ${JSON.stringify(group)})`);
  if (group !== undefined) return { group };
  if (id !== undefined) return { id };
  throw new CronfenceError('give a job id or --group <name>');
}

/** An empty group is most likely a typo: say so, and fail. Jobs already as asked are counted apart. */
function groupSummary(verb: string, group: string, results: readonly OperatorChangeResult[], write: (line: string) => void): void {
  if (results.length === 0) {
    write(`no jobs in group ${JSON.stringify(group)}; nothing ${verb}`);
    process.exitCode = 1;
    return;
  }
  const unchanged = results.filter((result) => !result.changed).length;
  write(
    `${verb} ${results.length - unchanged} jobs of group ${group}${unchanged > 0 ? `; ${unchanged} ${verb === 'paused' ? 'already paused so' : 'not paused'}, left as they were` : ''}`,
  );
}

function describePause({ job, skipped }: JobChangeResult): string {
  return `paused ${job.id} ${describeUntil(job)}, by ${job.pause?.actor ?? '?'}: ${job.pause?.reason ?? ''}; ${skipped} pending slices skipped`;
}

function describeUntil(job: StoredJob): string {
  return job.pause?.until !== undefined
    ? `until ${isoSecond(job.pause.until)} (then it resumes by itself)`
    : 'until `cronfence jobs resume`';
}

/** A progress bar on a terminal; nothing elsewhere (a pipe, CI). */
function progressBar(stream: NodeJS.WriteStream): { update: (progress: BackfillProgress) => void; stop: () => void } {
  if (!stream.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new SingleBar(
    { stream, format: 'backfill [{bar}] {value}/{total} occurrences, {created} enqueued, {existing} already there', hideCursor: true },
    Presets.shades_classic,
  );
  let started = false;
  let stopped = false;
  return {
    update: (progress) => {
      if (!started) bar.start(progress.total, 0, { created: 0, existing: 0 });
      started = true;
      bar.update(progress.done, { created: progress.created, existing: progress.existing });
    },
    stop: () => {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}
