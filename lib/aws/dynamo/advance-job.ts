/**
 * ADVANCE — a scanner turns a job's due occurrences into slices.
 *
 * One TransactWriteItems (at most 100 items, so at most 99 slices a call):
 *   [0..n-1] slices[jobId, T] for each occurrence T in the window
 *            Condition: NEW_SLICE (no slice at T) OR OLDER_GENERATION_UNRUN
 *                       (an older generation's slice at T with no ledger
 *                       record: ENQUEUED, FAILED or SKIPPED; see core/job-lifecycle.ts):
 *                       `mayCreateSlice` in core/slice-transitions.ts
 *            Effect:    ENQUEUED, attempts 0, this generation, with the job's
 *                       handler, policies and payload copied on (a worker needs
 *                       only the key); the fence is kept (it only ever grows),
 *                       the last run's lease, owner and error are removed
 *   [n]      slices[jobId, first missed T], when the scan found occurrences
 *            older than the catch-up window: MISSED, with missedUntil and
 *            missedCount, for the whole range (same condition as a slice;
 *            an instant an older generation ran is left as it is)
 *   [next]   slices[jobId, first skipped T], when the misfire policy (`latest`,
 *            `none`) does not run due occurrences: SKIPPED, skipReason
 *            `misfire`, missedUntil and missedCount for the range (same condition)
 *   [last]   jobs[jobId]
 *            Condition: version = the version read AND the job is still enabled
 *                       (`mayAdvanceJob`)
 *            Effect:    nextFireAt = first occurrence after the window, version + 1
 * Outcome: advanced (slices created); conflict (the job's condition failed:
 * another scanner or an update moved it first, and the winner created the
 * slices; or an earlier try of this same transaction landed and its reply was
 * lost, which the slices' scan id tells: they are returned to be sent); when some slices already exist (an instant already enqueued or
 * run), retried once without those; when DynamoDB is busy (a conflicting
 * transaction, throttling), sent again with backoff, then StoreBusyError (the
 * job is not advanced, so the next scan takes it up: nothing is lost).
 */
import { TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { sleep } from '../../core/clock.ts';
import { CronfenceError, StoreBusyError } from '../../core/errors.ts';
import type { MissedRange, SkippedRange } from '../../core/advance-plan.ts';
import type { AdvanceOutcome, NewSlice, StoredJob } from '../../core/ports.ts';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import { cancellationCodes, isBusyCancellation, isBusyRefusal, onTables } from './errors.ts';
import { fromItem, sliceKeyItem, toItem, type Item } from './items.ts';
import { isCreatedBy } from '../../core/slice-transitions.ts';

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
  missed?: MissedRange,
  skipped?: SkippedRange,
): Promise<AdvanceOutcome> {
  if (slices.length > MAX_SLICES_PER_ADVANCE) throw new RangeError(`at most ${MAX_SLICES_PER_ADVANCE} slices per advance`);
  let pending = [...slices];
  let rangesPending = [...(missed ? [missedPut(tables, job, missed, now)] : []), ...(skipped ? [skippedPut(tables, job, skipped, now)] : [])];
  let existingRetried = false;
  for (let busyTries = 1; ; ) {
    const items: TransactWriteItem[] = [...pending.map((slice) => slicePut(tables, job, slice, now)), ...rangesPending, jobUpdate(tables.jobsTable, job, nextFireAt)];
    try {
      await onTables(dynamo, { cronfence: [tables.slicesTable, tables.jobsTable] }, () => dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })));
      return { kind: 'advanced', created: pending.map(({ jobId, scheduledAt }) => ({ jobId, scheduledAt })) };
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw isBusyRefusal(error) ? new StoreBusyError(`advance of job ${job.id}`, (error as Error).name, { cause: error }) : error;
      const busy = codes.find(isBusyCancellation);
      if (busy !== undefined) {
        if (busyTries++ >= BUSY_TRIES) throw new StoreBusyError(`advance of job ${job.id}`, busy, { cause: error });
        await sleep(Math.floor(Math.random() * 25 * 2 ** busyTries));
        continue;
      }
      const rejected = codes.find((code) => code !== undefined && code !== 'ConditionalCheckFailed');
      if (rejected !== undefined) throw new CronfenceError(`advance of job ${JSON.stringify(job.id)} rejected (${rejected})`, { cause: error });
      if (codes[items.length - 1] !== undefined) return { kind: 'conflict', alreadyCreated: createdByThisScan(pending, error) };
      const failed = (index: number): boolean => codes[index] === 'ConditionalCheckFailed';
      const existing = new Set(pending.flatMap((_, index) => (failed(index) ? [index] : [])));
      const rangesExisting = new Set(rangesPending.flatMap((_, index) => (failed(pending.length + index) ? [index] : [])));
      if ((existing.size === 0 && rangesExisting.size === 0) || existingRetried) return { kind: 'conflict', alreadyCreated: [] };
      existingRetried = true;
      pending = pending.filter((_, index) => !existing.has(index));
      rangesPending = rangesPending.filter((_, index) => !rangesExisting.has(index));
    }
  }
}

const BUSY_TRIES = 4;

/** The slices whose condition failed because this scan had created them (the item the condition saw: ALL_OLD). */
function createdByThisScan(pending: readonly NewSlice[], error: unknown): SliceKey[] {
  const reasons = (error as { CancellationReasons?: { Code?: string; Item?: Item }[] }).CancellationReasons ?? [];
  return pending.flatMap((slice, index) => {
    const seen = reasons[index]?.Item;
    if (seen === undefined) return [];
    const raw = fromItem(seen);
    return isCreatedBy({ status: raw.status as SliceStatus, scanId: raw.scanId as string | undefined }, slice.scanId) ? [{ jobId: slice.jobId, scheduledAt: slice.scheduledAt }] : [];
  });
}

/** No slice exists at this instant. */
const NEW_SLICE = 'attribute_not_exists(jobId)';
/** An older generation left this instant without a ledger record: the new generation may run it. */
const OLDER_GENERATION_UNRUN =
  '(#status IN (:enqueued, :failed, :skipped) AND (attribute_not_exists(generation) OR generation < :generation))';
/** What the last run of an older generation left behind. */
const LAST_RUN_FIELDS = ['#owner', 'leaseExpiresAt', 'leaseMessageId', 'nextAttemptAt', 'lastError', 'startedAt', 'finishedAt', 'expiresAt', 'skipReason', 'operatorSlot', 'bufferedAt'];

/**
 * The one way a new slice is written (the scanner's advance, and the
 * operator's trigger and backfill, lib/aws/dynamo/operator-slots.ts): `extra`
 * adds the operator's record, or a triggered slot's own payload.
 */
export function slicePut(tables: AdvanceTables, job: StoredJob, slice: NewSlice, now: number, extra: Record<string, unknown> = {}): TransactWriteItem {
  return recreatableSliceUpdate(tables, slice, {
    status: SliceStatus.Enqueued,
    attempts: 0,
    generation: job.generation,
    handler: job.handler,
    policies: job.policies,
    payload: job.payload,
    shard: job.shard,
    leaseMs: job.policies.leaseMs,
    sweepShard: job.shard,
    sweepAt: slice.sweepAt,
    scanId: slice.scanId,
    createdAt: now,
    ...extra,
  });
}

/** The MISSED record of a range (lib/core/slice.ts missedUntil): final, so it leaves the sweep index. */
function missedPut(tables: AdvanceTables, job: StoredJob, missed: MissedRange, now: number): TransactWriteItem {
  return recreatableSliceUpdate(tables, { jobId: job.id, scheduledAt: missed.from }, {
    status: SliceStatus.Missed,
    attempts: 0,
    generation: job.generation,
    handler: job.handler,
    policies: job.policies,
    payload: undefined,
    shard: job.shard,
    leaseMs: job.policies.leaseMs,
    sweepShard: undefined,
    sweepAt: undefined,
    scanId: undefined,
    missedUntil: missed.to,
    missedCount: missed.count,
    finishedAt: now,
    createdAt: now,
  });
}

/** The SKIPPED record of a range the misfire policy did not run: final, out of the sweep index. */
function skippedPut(tables: AdvanceTables, job: StoredJob, skipped: SkippedRange, now: number): TransactWriteItem {
  return recreatableSliceUpdate(tables, { jobId: job.id, scheduledAt: skipped.from }, {
    status: SliceStatus.Skipped,
    skipReason: skipped.reason,
    attempts: 0,
    generation: job.generation,
    handler: job.handler,
    policies: job.policies,
    payload: undefined,
    shard: job.shard,
    leaseMs: job.policies.leaseMs,
    sweepShard: undefined,
    sweepAt: undefined,
    scanId: undefined,
    missedUntil: skipped.to,
    missedCount: skipped.count,
    finishedAt: now,
    createdAt: now,
  });
}

/**
 * Writes `fields` (an undefined one is removed) on an instant that has no
 * slice or only an older generation's unrun one; the fence is kept (it only
 * ever grows), the last run's lease, owner and error are removed.
 */
function recreatableSliceUpdate(tables: AdvanceTables, key: SliceKey, fields: Record<string, unknown>): TransactWriteItem {
  const present = Object.entries(fields).filter(([, value]) => value !== undefined);
  const absent = Object.keys(fields).filter((name) => fields[name] === undefined);
  const lastRun = LAST_RUN_FIELDS.filter((name) => !(name.replace('#', '') in fields));
  const values = toItem(Object.fromEntries(present.map(([name, value]) => [`:${name}`, value])));
  return {
    Update: {
      TableName: tables.slicesTable,
      Key: sliceKeyItem(key),
      UpdateExpression:
        `SET ${present.map(([name]) => `#${name} = :${name}`).join(', ')}, fence = if_not_exists(fence, :zero)` +
        ` REMOVE ${[...lastRun, ...absent.map((name) => `#${name}`)].join(', ')}`,
      ConditionExpression: `${NEW_SLICE} OR ${OLDER_GENERATION_UNRUN}`,
      // A refused put shows what is there: this scan's own slice, when an earlier try's reply was lost.
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      ExpressionAttributeNames: {
        '#owner': 'owner',
        ...Object.fromEntries(Object.keys(fields).map((name) => [`#${name}`, name])),
      },
      ExpressionAttributeValues: {
        ...values,
        ':zero': { N: '0' },
        ':enqueued': { S: SliceStatus.Enqueued },
        ':failed': { S: SliceStatus.Failed },
        ':skipped': { S: SliceStatus.Skipped },
      },
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
