/**
 * The dead-man's switch over an installation: for each active job, its
 * latest final slot, judged by the pure rule (core/dead-man.ts); each job
 * found silent raises a `stale` event naming it (the bus, and the EMF sink
 * turns it into StaleJobs and JobStale{jobId}, which the construct alarms on).
 *
 * Reads: one Scan of the jobs table, then per active job one Query of its
 * slices from the moment it last became active, newest first, projected to
 * key and status, stopping at the first final slot (usually the first page).
 * The tick runs it every DEAD_MAN_EVERY_MINUTES (lib/lambda/handlers.ts);
 * `cronfence verify` runs the same rule over what it reads.
 */
import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { deadManLookback, deadManVerdict, type DeadManVerdict } from '../core/dead-man.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { isActiveAt, isTombstone, type JobRecord } from '../core/job-lifecycle.ts';
import { mapBounded } from '../core/map-bounded.ts';
import type { StoredJob } from '../core/ports.ts';
import { isFinal, type SliceStatus } from '../core/slice.ts';
import type { CronfenceConfig } from './config.ts';
import { onTable } from './dynamo/errors.ts';
import { fromItem } from './dynamo/items.ts';

/** How often the tick runs the watch: the jobs table is read once per run. */
export const DEAD_MAN_EVERY_MINUTES = 10;
const QUERY_CONCURRENCY = 8;
const PAGE = 25;

export type StaleVerdict = Extract<DeadManVerdict, { kind: 'stale' }>;

export interface StaleJob extends StaleVerdict {
  readonly jobId: string;
}

export interface DeadManReport {
  readonly checked: number;
  readonly stale: StaleJob[];
}

/** Does the tick at `now` run the watch? (Every DEAD_MAN_EVERY_MINUTES, by the minute of the tick.) */
export function isDeadManMinute(now: number): boolean {
  return Math.floor(now / 60_000) % DEAD_MAN_EVERY_MINUTES === 0;
}

export class DeadManWatch {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable' | 'deadManFactor'>,
    /** Every job (JobRepository.list, or the jobs `cronfence verify` read). */
    private readonly listJobs: () => Promise<readonly JobRecord[]>,
    private readonly events?: EventSink,
    private readonly watcherId = 'dead-man',
  ) {}

  /** Judges every active job; emits one `stale` event per silent job (when given a sink). */
  async check(now: number): Promise<DeadManReport> {
    const report = await this.findStale(now);
    for (const job of report.stale) this.events?.emit(staleEvent(job, now, this.watcherId));
    return report;
  }

  /** Judges every active job, emitting nothing. */
  async findStale(now: number): Promise<DeadManReport> {
    const active = (await this.listJobs()).filter((job): job is StoredJob => !isTombstone(job) && isActiveAt(job, now));
    const stale: StaleJob[] = [];
    await mapBounded(active, QUERY_CONCURRENCY, async (job) => {
      const verdict = deadManVerdict({ job, lastFinalAt: await this.lastFinalAt(job), now, factor: this.config.deadManFactor });
      if (verdict.kind === 'stale') stale.push({ jobId: job.id, ...verdict });
    });
    stale.sort((a, b) => a.jobId.localeCompare(b.jobId));
    return { checked: active.length, stale };
  }

  /** Scheduled time of the job's latest final slot since it last became active. */
  private async lastFinalAt(job: StoredJob): Promise<number | undefined> {
    let start: Record<string, never> | undefined;
    do {
      const page = await onTable(this.config.slicesTable, () =>
        this.dynamo.send(
          new QueryCommand({
            TableName: this.config.slicesTable,
            KeyConditionExpression: 'jobId = :job AND scheduledAt >= :from',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':job': { S: job.id }, ':from': { N: String(deadManLookback(job)) } },
            ProjectionExpression: 'scheduledAt, #status',
            ScanIndexForward: false,
            Limit: PAGE,
            ExclusiveStartKey: start,
          }),
        ),
      );
      const final = (page.Items ?? []).map(fromItem).find((item) => isFinal(item.status as SliceStatus));
      if (final !== undefined) return final.scheduledAt as number;
      start = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (start !== undefined);
    return undefined;
  }
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
