/**
 * The dead-man's switch over an installation: each active job judged by the
 * pure rule (core/dead-man.ts) against its latest final slot; each job found
 * silent raises a `stale` event naming it (the bus, and the EMF sink turns it
 * into StaleJobs and JobStale{jobId}, which the construct alarms on).
 *
 * Cost bounded as jobs grow (docs/architecture/dead-man.md, "The dead-man's switch"):
 * - the tick runs `check`, one bounded step of a round over the jobs table:
 *   from the cursor (dynamo/dead-man-cursor.ts), Scan pages until
 *   `jobsPerRun` jobs or `budgetMs`, judge them, move the cursor; at the
 *   table's end the next step starts a new round;
 * - judging needs no read for a job whose deadline from its last change is
 *   still ahead; otherwise its probes (its latest k + 1 started occurrences)
 *   are read in BatchGetItem requests of 100 keys shared by many jobs, and
 *   only a job none of whose probes is final gets a Query of its history.
 * A row that does not parse, or a schedule that no longer does, is listed
 * in `unjudged` and the rest are judged. `cronfence verify` judges every job
 * it read with the same `judge`.
 */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../core/clock.ts';
import { deadManVerdict, freshnessProbes, type DeadManJob, type DeadManVerdict, type StaleJob } from '../core/dead-man.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { activeSince, isActiveAt } from '../core/job-lifecycle.ts';
import { isTombstone, type JobRecord, type StoredJob } from '../core/job-record.ts';
import { mapBounded } from '../core/map-bounded.ts';
import type { SliceKey } from '../core/slice.ts';
import type { CronfenceConfig } from './config.ts';
import { readDeadManCursor, writeDeadManCursor } from './dynamo/dead-man-cursor.ts';
import { onTable } from './dynamo/errors.ts';
import { latestFinalAmong, latestFinalSince, type SliceReads } from './dynamo/final-slots.ts';
import type { Item } from './dynamo/items.ts';
import { readJobRow, readRows } from './dynamo/stored-rows.ts';

export const DEAD_MAN_DEFAULTS = {
  /** Jobs one tick's step judges at most. */
  jobsPerRun: 10_000,
  /** Wall time one step may take (the tick Lambda's timeout is 30 s). */
  budgetMs: 10_000,
} as const;
const QUERY_CONCURRENCY = 8;
/** Scan page: about 1 MB of job items, the most one Scan request returns. */
const SCAN_PAGE = 1000;

export type { StaleJob } from '../core/dead-man.ts';

/** A job the switch could not judge: its row does not parse, or its stored schedule does not. */
export interface UnjudgedJob {
  readonly jobId: string;
  readonly reason: string;
}

export interface DeadManReport {
  /** Active jobs judged. */
  readonly checked: number;
  readonly stale: StaleJob[];
  readonly unjudged: UnjudgedJob[];
  /** Requests to the slices table (BatchGetItem and Query). */
  readonly sliceRequests: number;
}

export interface DeadManStep extends DeadManReport {
  /** Job items read from the jobs table in this step, and the Scan requests that read them. */
  readonly scanned: number;
  readonly scanRequests: number;
  /** True when this step reached the table's end: the next one starts a new round. */
  readonly roundEnded: boolean;
}

export interface DeadManOptions {
  readonly events?: EventSink;
  /** @default 'dead-man' */
  readonly watcherId?: string;
  readonly jobsPerRun?: number;
  readonly budgetMs?: number;
}

type WatchConfig = Pick<CronfenceConfig, 'jobsTable' | 'wheelTable' | 'slicesTable' | 'deadManFactor'>;

export class DeadManWatch {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: WatchConfig,
    /** Whose timers pace its reads' retries, and whose reading times its budget. */
    private readonly clock: Clock,
    private readonly options: DeadManOptions = {},
  ) {}

  /** One step of the round over the jobs table; emits one `stale` event per silent job it judged. */
  async check(now: number): Promise<DeadManStep> {
    const started = this.clock.elapsed();
    const jobsPerRun = this.options.jobsPerRun ?? DEAD_MAN_DEFAULTS.jobsPerRun;
    const budgetMs = this.options.budgetMs ?? DEAD_MAN_DEFAULTS.budgetMs;
    const cursor = await readDeadManCursor(this.dynamo, this.config.wheelTable);
    const totals = { checked: 0, stale: [] as StaleJob[], unjudged: [] as UnjudgedJob[], sliceRequests: 0, scanned: 0, scanRequests: 0 };
    let after = cursor.after;
    let roundEnded = false;
    while (totals.scanned < jobsPerRun && this.clock.elapsed() - started < budgetMs) {
      const page = await this.scanPage(after, Math.min(SCAN_PAGE, jobsPerRun - totals.scanned));
      totals.scanRequests++;
      totals.scanned += page.items.length;
      const rows = readRows(page.items, readJobRow);
      const report = await this.judge(rows.rows, now);
      totals.checked += report.checked;
      totals.stale.push(...report.stale);
      totals.unjudged.push(
        ...rows.unreadable.map((row) => ({ jobId: row.jobId, reason: `stored row: ${row.reason}` })),
        ...report.unjudged,
      );
      totals.sliceRequests += report.sliceRequests;
      after = page.lastKey;
      if (after === undefined) {
        roundEnded = true;
        break;
      }
    }
    await writeDeadManCursor(this.dynamo, this.config.wheelTable, {
      after,
      roundStartedAt: cursor.after === undefined ? now : cursor.roundStartedAt,
    });
    for (const job of totals.stale) this.options.events?.emit(staleEvent(job, now, this.options.watcherId ?? 'dead-man'));
    return { ...totals, stale: byJobId(totals.stale), roundEnded };
  }

  /** Judges `jobs` (tombstones and paused jobs are skipped), emitting nothing. */
  judge(jobs: readonly JobRecord[], now: number): Promise<DeadManReport> {
    return judgeJobs(this.dynamo, this.config, jobs, now, this.clock);
  }

  private async scanPage(after: string | undefined, limit: number): Promise<{ items: Item[]; lastKey: string | undefined }> {
    const page = await onTable(this.config.jobsTable, () =>
      this.dynamo.send(
        new ScanCommand({
          TableName: this.config.jobsTable,
          Limit: limit,
          ...(after !== undefined && { ExclusiveStartKey: { jobId: { S: after } } }),
        }),
      ),
    );
    return { items: page.Items ?? [], lastKey: page.LastEvaluatedKey?.jobId?.S };
  }
}

/** Judges `jobs` (tombstones and paused jobs are skipped), emitting nothing: the tick's step and `cronfence verify`. */
export async function judgeJobs(
  dynamo: DynamoDBClient,
  config: Pick<CronfenceConfig, 'slicesTable' | 'deadManFactor'>,
  jobs: readonly JobRecord[],
  now: number,
  clock: Clock,
): Promise<DeadManReport> {
  const factor = config.deadManFactor;
  const reads: SliceReads = { requests: 0 };
  const stale: StaleJob[] = [];
  const unjudged: UnjudgedJob[] = [];
  const active = jobs.filter((job): job is StoredJob => !isTombstone(job) && isActiveAt(job, now));
  const verdict = (job: DeadManJob, lastFinalAt: number | undefined): DeadManVerdict => deadManVerdict({ job, lastFinalAt, now, factor });
  // Judged without a read when its deadline from its last change is still ahead.
  const suspects: { job: StoredJob; probes: number[] }[] = [];
  for (const job of active) {
    try {
      if (verdict(job, undefined).kind === 'stale') suspects.push({ job, probes: freshnessProbes(job, now, factor) });
    } catch (error) {
      unjudged.push({ jobId: job.id, reason: `schedule ${JSON.stringify(job.schedule)} in ${job.timeZone}: ${(error as Error).message}` });
    }
  }
  const keys: SliceKey[] = suspects.flatMap(({ job, probes }) => probes.map((scheduledAt) => ({ jobId: job.id, scheduledAt })));
  const probed = await latestFinalAmong(dynamo, config.slicesTable, keys, reads, clock);
  const unproven = suspects.filter(({ job }) => {
    const latest = probed.get(job.id);
    return latest === undefined || verdict(job, latest).kind === 'stale';
  });
  await mapBounded(unproven, QUERY_CONCURRENCY, async ({ job }) => {
    const latest = await latestFinalSince(dynamo, config.slicesTable, job.id, activeSince(job), reads);
    const judged = verdict(job, latest);
    if (judged.kind === 'stale') stale.push({ jobId: job.id, ...judged });
  });
  return { checked: active.length - unjudged.length, stale: byJobId(stale), unjudged, sliceRequests: reads.requests };
}

function byJobId(stale: StaleJob[]): StaleJob[] {
  return [...stale].sort((a, b) => a.jobId.localeCompare(b.jobId));
}

export function staleEvent(job: StaleJob, now: number, watcherId: string) {
  return lifecycleEvent('stale', { jobId: job.jobId, scheduledAt: job.silentSince }, now, {
    fence: 0,
    worker: watcherId,
    silentSince: new Date(job.silentSince).toISOString(),
    deadline: new Date(job.deadline).toISOString(),
    intervalMs: job.intervalMs,
  });
}
