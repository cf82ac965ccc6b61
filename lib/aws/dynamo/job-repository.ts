/**
 * Job CRUD. What each operation does to the job and its slices is decided in
 * core/job-lifecycle.ts; here it becomes one write conditioned on the version
 * read (a racing update is never overwritten; a lost race is retried from a
 * fresh read), then:
 * - the new generation, if it runs, goes to its shard's wheel inbox
 *   (wheel-store.ts), where the next scan takes it up;
 * - the older generations' pending slices are settled SKIPPED
 *   (settle-pending-slices.ts), and so is every occurrence the ended
 *   generation had due with no slice yet (create-slices.ts SETTLE), so none
 *   is left without a record.
 *
 * A deleted job stays as a tombstone item (hidden from get and list), so a
 * job re-added under the same id continues its generation.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../core/clock.ts';
import { JobNotFoundError, JobVersionConflictError } from '../../core/errors.ts';
import {
  dueWithoutSlice,
  existingJob,
  inboxEntryOf,
  isTombstone,
  planDelete,
  planDeleteAfterOneTimeRun,
  planPause,
  planPut,
  planResume,
  withoutRecord,
  type JobRecord,
  type LifecycleChange,
  type SkipReason,
} from '../../core/job-lifecycle.ts';
import { parseJobSpec, type JobOrigin } from '../../core/job-spec.ts';
import type { OperatorNote, PauseState } from '../../core/operator.ts';
import { ledgerOfSlices, type LedgerRecord } from '../../core/ledger.ts';
import { definitionOf, type StoredJob } from '../../core/ports.ts';
import { isSetAsideNow, type SetAsideJob } from '../../core/set-aside.ts';
import { shardOf } from '../../core/shard.ts';
import type { Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { jobRecordItem, toJobRecord, toSlice } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { settlePendingSlices } from './settle-pending-slices.ts';
import { DynamoJobReader } from './job-reader.ts';
import { DynamoSliceStore } from './slice-store.ts';
import { DynamoWheelStore } from './wheel-store.ts';

const VERSION_RETRIES = 5;

type RepositoryConfig = Pick<CronfenceConfig, 'jobsTable' | 'wheelTable' | 'slicesTable' | 'shardCount' | 'sliceRetentionMs'>;

/** What a lifecycle operation did. */
export interface JobChangeResult<T extends JobRecord = StoredJob> {
  readonly job: T;
  /** Slices of older generations settled SKIPPED: pending ones, and due occurrences that had none. */
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

  /**
   * The job's set-aside record (core/set-aside.ts) when a scan set its current
   * generation aside: its stored row could not be planned or sent. One Query of
   * the shard's few set-aside records.
   */
  async setAsideOf(job: { readonly id: string; readonly generation: number }): Promise<SetAsideJob | undefined> {
    const records = await new DynamoWheelStore(this.dynamo, this.config).setAsideJobs(shardOf(job.id, this.config.shardCount));
    const record = records.find((candidate) => candidate.jobId === job.id);
    return isSetAsideNow(record, job) ? record : undefined;
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

  private read(id: string): Promise<JobRecord | undefined> {
    return new DynamoJobReader(this.dynamo, this.config).record(id);
  }

  /**
   * Read, plan, write on the version read, then put the new generation in
   * the inbox and settle the older ones. A plan of undefined means nothing to
   * change: the settle still runs, so a call repeated after a crash between
   * write and settle completes the settle.
   */
  private async change<T extends JobRecord>(
    id: string,
    plan: (previous: JobRecord | undefined, now: number) => LifecycleChange<T> | undefined,
  ): Promise<JobChangeResult<T>> {
    for (let attempt = 1; ; attempt++) {
      const previous = await this.read(id);
      const now = this.clock.now();
      const change = plan(previous, now);
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
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if (attempt >= VERSION_RETRIES) throw new JobVersionConflictError(id, previous?.version ?? 0, { cause: error });
        continue;
      }
      const entry = inboxEntryOf(change.next);
      if (entry) await new DynamoWheelStore(this.dynamo, this.config).putInbox(shardOf(id, this.config.shardCount), entry);
      // Only a change that ends the generation settles its due occurrences: one that keeps it (resuming a timed
      // pause after its end) must not write SKIPPED over occurrences that generation's messages are about to run.
      const ended = previous !== undefined && previous.generation !== change.next.generation;
      const skipped = (await this.settle(change.next, now, change.settle)) + (ended ? await this.settleDue(previous, now, change.settle) : 0);
      return { job: change.next, skipped };
    }
  }

  /**
   * The occurrences the ended generation had due with no slice (core/job-lifecycle.ts
   * `dueWithoutSlice`): SKIPPED with the change's reason, unless a claim creates one first.
   */
  private async settleDue(previous: JobRecord | undefined, now: number, reason: SkipReason): Promise<number> {
    const due = dueWithoutSlice(previous, now);
    if (due === undefined || due.occurrences.length === 0 || previous === undefined || isTombstone(previous)) return 0;
    const recorded = await queryAll(this.dynamo, {
      TableName: this.config.slicesTable,
      KeyConditionExpression: 'jobId = :job AND scheduledAt BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':job': { S: previous.id }, ':from': { N: String(due.from) }, ':to': { N: String(due.to - 1) } },
      ConsistentRead: true,
    });
    const missing = withoutRecord(due.occurrences, previous.generation, recorded.map(toSlice));
    return new DynamoSliceStore(this.dynamo, this.config).settleAbsent(previous.id, definitionOf(previous), missing, reason, now);
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
