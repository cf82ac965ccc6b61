/**
 * Job CRUD. Every write validates first (parseJobSpec) and conditions on the
 * version it read, so a concurrent scanner advance or update is never
 * overwritten; a lost race is retried from a fresh read.
 *
 * PUT:    create (attribute_not_exists) or replace (version = read); version + 1.
 *         nextFireAt: the first occurrence from now; for an unchanged
 *         schedule, never earlier than the stored nextFireAt (slices before it
 *         already exist).
 * PAUSE:  enabled = false, dueShard removed (leaves the due index), version + 1;
 *         enqueued slices from now on are SKIPPED.
 * RESUME: enabled = true, dueShard = shard, nextFireAt from now, version + 1.
 * DELETE: the job item; enqueued slices from now on are SKIPPED; history stays.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../core/clock.ts';
import { JobNotFoundError, JobVersionConflictError } from '../../core/errors.ts';
import { parseJobSpec, type JobSpec } from '../../core/job-spec.ts';
import type { LedgerRecord } from '../../core/ledger.ts';
import type { StoredJob } from '../../core/ports.ts';
import { nextOccurrenceAtOrAfter, scheduleOf } from '../../core/schedule.ts';
import { shardOf } from '../../core/shard.ts';
import type { Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { jobItem, toLedgerRecord, toSlice, toStoredJob } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { skipPendingSlices } from './skip-pending-slices.ts';

/** "Never fires again": stays out of every due window. */
const NEVER = Number.MAX_SAFE_INTEGER;
const VERSION_RETRIES = 5;

type RepositoryConfig = Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'ledgerTable' | 'shardCount' | 'sliceRetentionMs'>;

export class JobRepository {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: RepositoryConfig,
    private readonly clock: Clock,
    private readonly knownHandlers?: readonly string[],
  ) {}

  /**
   * Creates or replaces a job.
   * @throws {InvalidJobSpecError} before anything is written.
   */
  async put(input: unknown): Promise<{ job: StoredJob; created: boolean }> {
    const spec = parseJobSpec(input, { knownHandlers: this.knownHandlers });
    for (let attempt = 1; ; attempt++) {
      const existing = await this.get(spec.id);
      const job = this.nextVersion(spec, existing);
      try {
        await onTable(this.config.jobsTable, () =>
          this.dynamo.send(
            new PutItemCommand({
              TableName: this.config.jobsTable,
              Item: jobItem(job),
              ...(existing
                ? { ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': { N: String(existing.version) } } }
                : { ConditionExpression: 'attribute_not_exists(jobId)' }),
            }),
          ),
        );
        return { job, created: existing === undefined };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        if (attempt >= VERSION_RETRIES) throw new JobVersionConflictError(spec.id, existing?.version ?? 0, { cause: error });
      }
    }
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const result = await onTable(this.config.jobsTable, () =>
      this.dynamo.send(new GetItemCommand({ TableName: this.config.jobsTable, Key: { jobId: { S: id } }, ConsistentRead: true })),
    );
    return result.Item ? toStoredJob(result.Item) : undefined;
  }

  /** @throws {JobNotFoundError} */
  async require(id: string): Promise<StoredJob> {
    const job = await this.get(id);
    if (!job) throw new JobNotFoundError(id);
    return job;
  }

  async list(): Promise<StoredJob[]> {
    const items = await scanAll(this.dynamo, { TableName: this.config.jobsTable, ConsistentRead: true });
    return items.map(toStoredJob).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** @returns the job after the change and how many enqueued slices were skipped. */
  async pause(id: string): Promise<{ job: StoredJob; skipped: number }> {
    const job = await this.setEnabled(id, false);
    const now = this.clock.now();
    const skipped = await skipPendingSlices(this.dynamo, this.config.slicesTable, id, now, now, this.config.sliceRetentionMs);
    return { job, skipped };
  }

  async resume(id: string): Promise<StoredJob> {
    return this.setEnabled(id, true);
  }

  /** @returns false when there was no such job. */
  async delete(id: string): Promise<{ deleted: boolean; skipped: number }> {
    const result = await onTable(this.config.jobsTable, () =>
      this.dynamo.send(new DeleteItemCommand({ TableName: this.config.jobsTable, Key: { jobId: { S: id } }, ReturnValues: 'ALL_OLD' })),
    );
    const now = this.clock.now();
    const skipped = await skipPendingSlices(this.dynamo, this.config.slicesTable, id, now, now, this.config.sliceRetentionMs);
    return { deleted: result.Attributes !== undefined, skipped };
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

  /** Ledger records of a job from `sinceMs` on (a scan: for operators and tests, not the hot path). */
  async ledgerOf(jobId: string, sinceMs: number): Promise<LedgerRecord[]> {
    const items = await scanAll(this.dynamo, {
      TableName: this.config.ledgerTable,
      FilterExpression: 'jobId = :job AND scheduledAt >= :since',
      ExpressionAttributeValues: { ':job': { S: jobId }, ':since': { N: String(sinceMs) } },
      ConsistentRead: true,
    });
    return items.map(toLedgerRecord).sort((a, b) => a.scheduledAt - b.scheduledAt);
  }

  private nextVersion(spec: JobSpec, existing: StoredJob | undefined): StoredJob {
    const now = this.clock.now();
    const fromNow = nextOccurrenceAtOrAfter(scheduleOf(spec), now) ?? NEVER;
    const sameSchedule = existing && existing.schedule === spec.schedule && existing.timeZone === spec.timeZone;
    return {
      ...spec,
      shard: shardOf(spec.id, this.config.shardCount),
      nextFireAt: sameSchedule ? Math.max(fromNow, existing.nextFireAt) : fromNow,
      version: (existing?.version ?? 0) + 1,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
  }

  private async setEnabled(id: string, enabled: boolean): Promise<StoredJob> {
    const job = await this.require(id);
    const now = this.clock.now();
    const nextFireAt = enabled ? (nextOccurrenceAtOrAfter(scheduleOf(job), now) ?? NEVER) : job.nextFireAt;
    try {
      const result = await onTable(this.config.jobsTable, () =>
        this.dynamo.send(
          new UpdateItemCommand({
            TableName: this.config.jobsTable,
            Key: { jobId: { S: id } },
            UpdateExpression: enabled
              ? 'SET enabled = :true, dueShard = shard, nextFireAt = :next, version = version + :one, updatedAt = :now'
              : 'SET enabled = :false, version = version + :one, updatedAt = :now REMOVE dueShard',
            ConditionExpression: 'attribute_exists(jobId)',
            ExpressionAttributeValues: {
              ...(enabled ? { ':true': { BOOL: true }, ':next': { N: String(nextFireAt) } } : { ':false': { BOOL: false } }),
              ':one': { N: '1' },
              ':now': { N: String(now) },
            },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return toStoredJob(result.Attributes ?? {});
    } catch (error) {
      if (isConditionFailure(error)) throw new JobNotFoundError(id);
      throw error;
    }
  }
}
