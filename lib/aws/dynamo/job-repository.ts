/**
 * Job CRUD. What each operation does to the job and its slices is decided in
 * core/job-lifecycle.ts; here it becomes one write conditioned on the version
 * read (a racing scanner advance or update is never overwritten; a lost race
 * is retried from a fresh read), then a settle of the older generations'
 * pending slices (settle-pending-slices.ts). A change that ends a definition
 * with occurrences already due but not yet sliced first advances the job over
 * them (advance-job.ts), so the settle records them too.
 *
 * A deleted job stays as a tombstone item (no due-index key, hidden from get
 * and list), so a job re-added under the same id continues its generation.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../core/clock.ts';
import { JobNotFoundError, JobVersionConflictError } from '../../core/errors.ts';
import {
  existingJob,
  isTombstone,
  planDelete,
  planDeleteAfterOneTimeRun,
  planPause,
  planCatchUpBeforeChange,
  planPut,
  planResume,
  type JobRecord,
  type LifecycleChange,
  type SkipReason,
} from '../../core/job-lifecycle.ts';
import { parseJobSpec, type JobOrigin } from '../../core/job-spec.ts';
import type { OperatorNote, PauseState } from '../../core/operator.ts';
import { ledgerOfSlices, type LedgerRecord } from '../../core/ledger.ts';
import type { StoredJob } from '../../core/ports.ts';
import { shardOf } from '../../core/shard.ts';
import { sweepAtFor, SliceStatus, type Slice } from '../../core/slice.ts';
import { advanceJob } from './advance-job.ts';
import type { CronfenceConfig } from '../config.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { jobRecordItem, toJobRecord, toSlice } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { settlePendingSlices } from './settle-pending-slices.ts';

const VERSION_RETRIES = 5;

type RepositoryConfig = Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'shardCount' | 'sliceRetentionMs' | 'sweepGraceMs'>;
/** Advances of one catch-up before a change (99 occurrences each): a per-second job's 10-minute catch-up window is 7. */
const CATCH_UP_ADVANCES = 20;

/** What a lifecycle operation did. */
export interface JobChangeResult<T extends JobRecord = StoredJob> {
  readonly job: T;
  /** Pending slices of older generations settled SKIPPED. */
  readonly skipped: number;
}

export class JobRepository {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: RepositoryConfig,
    private readonly clock: Clock,
    private readonly knownHandlers?: readonly string[],
  ) {}

  /**
   * Creates or replaces a job. Storing the definition it already has changes nothing.
   * @throws {InvalidJobSpecError} before anything is written.
   */
  async put(input: unknown): Promise<JobChangeResult & { created: boolean }> {
    const spec = parseJobSpec(input, { knownHandlers: this.knownHandlers });
    let firstPlan: { absent: boolean; generation: number | undefined } | undefined;
    const result = await this.change(spec.id, (previous, now) => {
      const plan = planPut(spec, previous, now, this.config.shardCount);
      firstPlan ??= { absent: previous === undefined || isTombstone(previous), generation: plan?.next.generation };
      return plan;
    });
    // Judged from the first read: a create whose reply was lost lands before the SDK sends it again, and the
    // resend then finds this very item (same generation), not someone else's.
    const created = firstPlan?.absent === true && result.job.generation === firstPlan.generation;
    return { ...result, created };
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const record = await this.read(id);
    return isTombstone(record) ? undefined : record;
  }

  /** @throws {JobNotFoundError} */
  async require(id: string): Promise<StoredJob> {
    const job = await this.get(id);
    if (!job) throw new JobNotFoundError(id);
    return job;
  }

  async list(): Promise<StoredJob[]> {
    const items = await scanAll(this.dynamo, { TableName: this.config.jobsTable, ConsistentRead: true });
    return items
      .map(toJobRecord)
      .filter((record): record is StoredJob => !isTombstone(record))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Jobs of a group (`--group`), by id. */
  async listGroup(group: string): Promise<StoredJob[]> {
    return (await this.list()).filter((job) => job.group === group);
  }

  /**
   * @param pause who paused it, why, and (optional) when it resumes by itself (see core/job-lifecycle.ts planPause).
   * @throws {JobNotFoundError}
   */
  pause(id: string, pause?: Omit<PauseState, 'at'>): Promise<JobChangeResult> {
    return this.change(id, (previous, now) => planPause(existingJob(id, previous), now, pause && { ...pause, at: now }));
  }

  /** @throws {JobNotFoundError} */
  resume(id: string, note?: Omit<OperatorNote, 'at'>): Promise<JobChangeResult> {
    return this.change(id, (previous, now) => planResume(existingJob(id, previous), now, note && { ...note, at: now }));
  }

  /**
   * @param options.origin the deleting owner: a job of the other origin is left alone (`deleted: false`, `foreign: true`).
   * @returns deleted: false when there was no such job.
   */
  async delete(id: string, options: { origin?: JobOrigin } = {}): Promise<{ deleted: boolean; skipped: number; foreign?: boolean }> {
    if (options.origin !== undefined) {
      const job = await this.get(id);
      if (job?.origin !== undefined && job.origin !== options.origin) return { deleted: false, skipped: 0, foreign: true };
    }
    try {
      const { skipped } = await this.change(id, (previous, now) => planDelete(existingJob(id, previous), now));
      return { deleted: true, skipped };
    } catch (error) {
      if (error instanceof JobNotFoundError) return { deleted: false, skipped: 0 };
      throw error;
    }
  }

  /** A one-time job's run is over: delete it, unless it was redefined since (OneTimeJobs, core/job-lifecycle.ts). */
  async deleteAfterRun(id: string, generation: number): Promise<void> {
    await this.change(id, (previous, now) => planDeleteAfterOneTimeRun(previous, generation, now));
  }

  /** Slices of a job from `sinceMs` on, oldest first. */
  async slicesOf(jobId: string, sinceMs: number): Promise<Slice[]> {
    const items = await queryAll(this.dynamo, {
      TableName: this.config.slicesTable,
      KeyConditionExpression: 'jobId = :job AND scheduledAt >= :since',
      ExpressionAttributeValues: { ':job': { S: jobId }, ':since': { N: String(sinceMs) } },
      ConsistentRead: true,
    });
    return items.map(toSlice);
  }

  /** Ledger records of a job from `sinceMs` on, oldest first: those its final slices carry. */
  async ledgerOf(jobId: string, sinceMs: number): Promise<LedgerRecord[]> {
    return ledgerOfSlices(await this.slicesOf(jobId, sinceMs));
  }

  private async read(id: string): Promise<JobRecord | undefined> {
    const result = await onTable(this.config.jobsTable, () =>
      this.dynamo.send(new GetItemCommand({ TableName: this.config.jobsTable, Key: { jobId: { S: id } }, ConsistentRead: true })),
    );
    return result.Item ? toJobRecord(result.Item) : undefined;
  }

  /**
   * Read, plan, write on the version read, then settle older generations. A
   * plan of undefined means nothing to change: the settle still runs, so a
   * call repeated after a crash between write and settle completes the settle.
   */
  private async change<T extends JobRecord>(
    id: string,
    plan: (previous: JobRecord | undefined, now: number) => LifecycleChange<T> | undefined,
  ): Promise<JobChangeResult<T>> {
    for (let attempt = 1; ; attempt++) {
      let previous = await this.read(id);
      const now = this.clock.now();
      let change = plan(previous, now);
      if (change !== undefined && planCatchUpBeforeChange(previous, now) !== undefined) {
        previous = await this.catchUp(previous as StoredJob, now);
        change = plan(previous, now);
      }
      if (change === undefined) {
        const job = previous as T;
        return { job, skipped: await this.settle(job, now, settleReasonOf(job)) };
      }
      try {
        await onTable(this.config.jobsTable, () =>
          this.dynamo.send(
            new PutItemCommand({
              TableName: this.config.jobsTable,
              Item: jobRecordItem(change.next),
              ...(previous
                ? { ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': { N: String(previous.version) } } }
                : { ConditionExpression: 'attribute_not_exists(jobId)' }),
            }),
          ),
        );
        return { job: change.next, skipped: await this.settle(change.next, now, change.settle) };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if (attempt >= VERSION_RETRIES) throw new JobVersionConflictError(id, previous?.version ?? 0, { cause: error });
      }
    }
  }

  /** Advances the job over its due, unsliced occurrences (planCatchUpBeforeChange); re-reads after a racing scanner. */
  private async catchUp(job: StoredJob, now: number): Promise<JobRecord | undefined> {
    let record: JobRecord | undefined = job;
    for (let advances = 0; advances < CATCH_UP_ADVANCES; advances++) {
      const plan = planCatchUpBeforeChange(record, now);
      if (plan === undefined) return record;
      const behind = record as StoredJob;
      const slices = plan.occurrences.map((scheduledAt) => ({
        jobId: behind.id,
        scheduledAt,
        sweepAt: sweepAtFor(SliceStatus.Enqueued, { scheduledAt, now, graceMs: this.config.sweepGraceMs }),
      }));
      const outcome = await advanceJob(this.dynamo, this.config, behind, slices, plan.nextFireAt, now, plan.missed, plan.skipped);
      record = outcome.kind === 'advanced' ? { ...behind, nextFireAt: plan.nextFireAt, version: behind.version + 1 } : await this.read(behind.id);
    }
    return record;
  }

  private settle(job: JobRecord, now: number, reason: LifecycleChange['settle']): Promise<number> {
    if (job.generation <= 1) return Promise.resolve(0);
    return settlePendingSlices(this.dynamo, this.config.slicesTable, {
      jobId: job.id,
      shard: shardOf(job.id, this.config.shardCount),
      generation: job.generation,
      reason,
      now,
      retentionMs: this.config.sliceRetentionMs,
    });
  }
}

/** The reason to settle with when the stored state already is the one asked for. */
function settleReasonOf(job: JobRecord): SkipReason {
  if (isTombstone(job)) return 'deleted';
  return job.enabled ? 'superseded' : 'paused';
}
