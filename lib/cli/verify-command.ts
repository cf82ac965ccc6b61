/**
 * `cronfence verify [--since T] [--until T] [--job ID] [--json]`: audits an
 * installation's stored history against the invariants (docs/verify.md).
 * Exit 0 when it holds, 1 on any violation, 2 when it could not check (bad
 * input, an installation it cannot read), 3 when there was nothing to check
 * (no occurrence expected: a young installation, no active job).
 */
import { Command, InvalidArgumentError, Option, type CommanderError } from 'commander';
import { SingleBar } from 'cli-progress';
import { AUDIT_DEFAULTS } from '../core/audit.ts';
import type { AuditReadProgress, EffectSource } from '../aws/dynamo/audit-reader.ts';
import { verifyInstallation, type VerifySource } from '../aws/verify-installation.ts';
import { verifyChunks } from '../aws/verify-chunks.ts';
import type { ChunkAuditReport } from '../core/chunk-audit.ts';
import { MissingResourceError } from '../core/errors.ts';
import { parseDurationFlag, parseTimeAgo } from './time-flags.ts';
import { renderAuditReport } from './verify-format.ts';

/** Exit code for bad input or an unreadable installation (a violation is 1). */
export const USAGE_EXIT_CODE = 2;
/** Reads this quick show no progress. */
const QUIET_MS = 1000;

interface VerifyFlags {
  readonly since: number;
  readonly until?: number;
  readonly job?: string;
  readonly grace: number;
  readonly lateAfter: number;
  readonly effects: EffectSource[];
  readonly json?: boolean;
}

export function verifyCommand(source: () => VerifySource, write: (line: string) => void): Command {
  const now = Date.now();
  const time = (value: string): number => parseTimeAgo(value, now);
  return new Command('verify')
    .description('check an installation: every expected occurrence final once, no key committed twice, slices and ledger agree')
    .addOption(
      new Option('--since <time>', 'ISO time or a duration ago like 90m, 24h, 7d').argParser(time).default(now - 86_400_000, '24h ago'),
    )
    .addOption(new Option('--until <time>', 'ISO time or a duration ago (default: now)').argParser(time).default(undefined, 'now'))
    .option('--job <id>', 'only this job (a deleted one too)')
    .addOption(
      new Option('--grace <duration>', 'how long a live slice may wait before it counts as stuck; newer occurrences are not expected yet')
        .argParser(parseDurationFlag)
        .default(AUDIT_DEFAULTS.graceMs, '2m'),
    )
    .addOption(
      new Option('--late-after <duration>', 'list starts later than this')
        .argParser(parseDurationFlag)
        .default(AUDIT_DEFAULTS.lateThresholdMs, '1s'),
    )
    .option(
      '--effects <table[:keyAttribute]>',
      'a business table your commits write, stamped with the execution key (default attribute executionKey) and `fence`; repeatable',
      collectEffect,
      [],
    )
    .option('--json', 'print the report as one JSON object (docs/verify.md)')
    .exitOverride(usageExit)
    .action(async (flags: VerifyFlags) => {
      const until = flags.until ?? Date.now();
      if (until <= flags.since) {
        return usageError(`--until ${new Date(until).toISOString()} is not after --since ${new Date(flags.since).toISOString()}`);
      }
      const progress = progressReporter();
      let report;
      try {
        const request = {
          since: flags.since,
          until,
          jobId: flags.job,
          graceMs: flags.grace,
          lateThresholdMs: flags.lateAfter,
          effects: flags.effects,
          onProgress: progress.update,
        };
        report = await verifyInstallation(source(), request);
      } catch (error) {
        if (error instanceof RangeError) return usageError(`--since/--until: ${error.message}`);
        // Not a verdict: exit 2, so a nightly job tells "could not check" from "violations found".
        const cause = error as Error;
        return usageError(`could not read the installation (tables ${describeTables(source)}): ${cause.name}: ${cause.message}`);
      } finally {
        progress.stop();
      }
      if (flags.job !== undefined && report.jobs.checked === 0) {
        return usageError(
          `--job ${JSON.stringify(flags.job)}: no job, deleted job, slice or ledger record with this id between --since and --until`,
        );
      }
      let chunks: ChunkAuditReport | undefined;
      try {
        chunks = await chunkAudit(source(), { since: flags.since, until, jobId: flags.job, now: Date.now(), graceMs: flags.grace });
      } catch (error) {
        const cause = error as Error;
        return usageError(`could not read the chunks table: ${cause.name}: ${cause.message}`);
      }
      if (flags.json) write(JSON.stringify(chunks === undefined ? report : { ...report, chunks }, null, 2));
      else for (const line of [...renderAuditReport(report), ...renderChunkAudit(chunks)]) write(line);
      process.exitCode = chunks !== undefined && chunks.violations.length > 0 ? 1 : report.exitCode;
    });
}

/** The chunks table's check (chunk records and outbox items); undefined for an installation without one. */
async function chunkAudit(source: VerifySource, request: Parameters<typeof verifyChunks>[2]): Promise<ChunkAuditReport | undefined> {
  const chunksTable = source.config.chunksTable;
  if (chunksTable === undefined) return undefined;
  try {
    return await verifyChunks(source.dynamo, { slicesTable: source.config.slicesTable, chunksTable }, request);
  } catch (error) {
    // An installation bootstrapped before chunked commits has no chunks table, and so nothing to check there.
    if (error instanceof MissingResourceError) return undefined;
    throw error;
  }
}

function renderChunkAudit(chunks: ChunkAuditReport | undefined): string[] {
  if (chunks === undefined || chunks.chunks + chunks.outbox.pending + chunks.outbox.delivered + chunks.outbox.dead === 0) return [];
  const { pending, delivered, dead } = chunks.outbox;
  return [
    `chunked slices: ${chunks.executions} executions, ${chunks.chunks} chunk records; outbox ${delivered} delivered, ${pending} pending, ${dead} dead-lettered`,
    ...chunks.violations.map((violation) => `  VIOLATION ${violation.kind} ${violation.executionKey}: ${violation.detail}`),
  ];
}

/** `table` or `table:keyAttribute`; DynamoDB table names never contain ':'. */
function collectEffect(value: string, previous: EffectSource[]): EffectSource[] {
  const [table = '', keyAttribute, ...rest] = value.split(':');
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table) || rest.length > 0 || keyAttribute === '') {
    throw new InvalidArgumentError(
      `${JSON.stringify(value)} is not a table name (3 to 255 of A-Z a-z 0-9 _ . -), optionally followed by :keyAttribute`,
    );
  }
  return [...previous, keyAttribute === undefined ? { table } : { table, keyAttribute }];
}

function usageError(message: string): void {
  process.stderr.write(`cronfence verify: ${message}\n`);
  process.exitCode = USAGE_EXIT_CODE;
}

function describeTables(source: () => VerifySource): string {
  try {
    const { config } = source();
    return `${config.jobsTable}, ${config.slicesTable}${process.env.AWS_ENDPOINT_URL ? ` at ${process.env.AWS_ENDPOINT_URL}` : ''}`;
  } catch {
    return 'unknown';
  }
}

/** Commander's own parse errors (a bad --since, an unknown flag) exit 2 too; help exits 0. */
function usageExit(error: CommanderError): never {
  process.exit(error.exitCode === 0 ? 0 : USAGE_EXIT_CODE);
}

const UNITS: Record<AuditReadProgress['phase'], string> = {
  effects: 'business items scanned',
  jobs: 'job items scanned',
  keys: 'slice keys scanned',
  slices: 'jobs queried for slices',
};

/** Progress on stderr once a read has taken a second: a bar on a terminal, one line per phase elsewhere. */
function progressReporter(): { update: (progress: AuditReadProgress) => void; stop: () => void } {
  const startedAt = Date.now();
  let bar: SingleBar | undefined;
  let lastPhase = '';
  return {
    update(progress) {
      if (Date.now() - startedAt < QUIET_MS) return;
      const total = progress.total ?? progress.done;
      const payload = { phase: progress.phase, unit: UNITS[progress.phase] };
      if (process.stderr.isTTY) {
        if (!bar) {
          bar = new SingleBar({ format: 'verify {phase} |{bar}| {value}/{total} {unit}', stream: process.stderr, hideCursor: true });
          bar.start(total, progress.done, payload);
        } else {
          bar.setTotal(total);
          bar.update(progress.done, payload);
        }
      } else if (progress.phase !== lastPhase) {
        process.stderr.write(`verify: reading ${progress.phase} (${progress.done} ${payload.unit} so far)\n`);
      }
      lastPhase = progress.phase;
    },
    stop() {
      bar?.stop();
    },
  };
}
