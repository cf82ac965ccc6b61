/**
 * ADVANCE — a scanner turns a job's due occurrences into slices.
 *
 * One TransactWriteItems (at most 100 items, so at most 99 slices a call):
 *   [0..n-1] slices[jobId, T] for each occurrence T in the window
 *            Condition: attribute_not_exists(jobId)   — never overwrite a slice
 *            Effect:    ENQUEUED, fence 0, attempts 0, with the job's handler,
 *                       policies and payload copied on (a worker needs only the key)
 *   [n]      jobs[jobId]
 *            Condition: version = the version read AND the job is still enabled
 *            Effect:    nextFireAt = first occurrence after the window, version + 1
 * Outcome: advanced (slices created); conflict (another scanner or an update
 * moved the job first: the winner created the slices); or, when some slices
 * already exist (a schedule change re-hit an instant that is already
 * enqueued), retried once without those.
 */
import { TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { AdvanceOutcome, NewSlice, StoredJob } from '../../core/ports.ts';
import { SliceStatus } from '../../core/slice.ts';
import { cancellationCodes, onTable } from './errors.ts';
import { toItem } from './items.ts';

export const MAX_SLICES_PER_ADVANCE = 99;

export interface AdvanceTables {
  readonly jobsTable: string;
  readonly slicesTable: string;
  /** Added to the job's timeout to give `sweepAt` on claim. */
  readonly sweepGraceMs: number;
}

export async function advanceJob(
  dynamo: DynamoDBClient,
  tables: AdvanceTables,
  job: StoredJob,
  slices: readonly NewSlice[],
  nextFireAt: number,
  now: number,
): Promise<AdvanceOutcome> {
  if (slices.length > MAX_SLICES_PER_ADVANCE) throw new RangeError(`at most ${MAX_SLICES_PER_ADVANCE} slices per advance`);
  let pending = [...slices];
  for (let attempt = 0; attempt < 2; attempt++) {
    const items: TransactWriteItem[] = [...pending.map((slice) => slicePut(tables, job, slice, now)), jobUpdate(tables.jobsTable, job, nextFireAt)];
    try {
      await onTable(tables.jobsTable, () => dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })));
      return { kind: 'advanced', created: pending.map(({ jobId, scheduledAt }) => ({ jobId, scheduledAt })) };
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw error;
      if (codes[pending.length] !== undefined) return { kind: 'conflict' };
      const existing = new Set(codes.flatMap((code, index) => (code === 'ConditionalCheckFailed' && index < pending.length ? [index] : [])));
      if (existing.size === 0) return { kind: 'conflict' };
      pending = pending.filter((_, index) => !existing.has(index));
    }
  }
  return { kind: 'conflict' };
}

function slicePut(tables: AdvanceTables, job: StoredJob, slice: NewSlice, now: number): TransactWriteItem {
  return {
    Put: {
      TableName: tables.slicesTable,
      Item: toItem({
        jobId: job.id,
        scheduledAt: slice.scheduledAt,
        status: SliceStatus.Enqueued,
        fence: 0,
        attempts: 0,
        handler: job.handler,
        policies: job.policies,
        payload: job.payload,
        shard: job.shard,
        leaseMs: job.policies.leaseMs,
        claimSweepMs: job.policies.timeoutMs + tables.sweepGraceMs,
        sweepShard: job.shard,
        sweepAt: slice.sweepAt,
        scanId: slice.scanId,
        createdAt: now,
      }),
      ConditionExpression: 'attribute_not_exists(jobId)',
    },
  };
}

function jobUpdate(jobsTable: string, job: StoredJob, nextFireAt: number): TransactWriteItem {
  return {
    Update: {
      TableName: jobsTable,
      Key: { jobId: { S: job.id } },
      UpdateExpression: 'SET nextFireAt = :next, version = version + :one',
      ConditionExpression: 'version = :version AND attribute_exists(dueShard)',
      ExpressionAttributeValues: {
        ':next': { N: String(nextFireAt) },
        ':one': { N: '1' },
        ':version': { N: String(job.version) },
      },
    },
  };
}
