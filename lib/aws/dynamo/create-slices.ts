/**
 * CREATE — the slices written before any claim (a scanner's occurrence is
 * created by its claim, claim-slice.ts): each one conditional UpdateItem of
 * slices[jobId, T], on condition NEW_SLICE OR OLDER_GENERATION_UNRUN (no
 * slice at T, or one an older generation left without a ledger record:
 * ENQUEUED, FAILED or SKIPPED; `mayCreateSlice` in core/slice-transitions.ts).
 * The fence is kept (it only ever grows); the last run's lease, owner and
 * error are removed. A failed condition means the instant already has its
 * record: nothing to do.
 *
 *   ENQUEUE  ENQUEUED with the generation's definition, in the sweep index
 *            (sweepShard, sweepAt): the reconciler's slice for a lost
 *            message, an operator's trigger or backfill (operator-slots.ts,
 *            inside its transaction). @returns whether it was created.
 *   RANGE    MISSED (older than the catch-up window when a scan came back) or
 *            SKIPPED `misfire`, one item at the range's first occurrence with
 *            missedUntil and missedCount: final, so out of the sweep index.
 *   SETTLE   SKIPPED with a change's reason, at a due occurrence of the
 *            generation the change ended that has no slice (a claim that
 *            creates it first wins).
 */
import {
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type TransactWriteItem,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { MissedRange, SkippedRange } from '../../core/advance-plan.ts';
import type { SkipReason } from '../../core/job-record.ts';
import type { NewSlice, RangeRecordOutcome } from '../../core/ports.ts';
import { rangeRecordOutcome } from '../../core/slice-transitions.ts';
import { SliceStatus, type SliceDefinition, type SliceKey } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { readSlice } from './claim-slice.ts';
import { sliceDefinitionFields, sliceKeyItem, toItem, toSlice } from './items.ts';

export interface SliceTables {
  readonly slicesTable: string;
  /** History retention of SKIPPED and MISSED slices (their TTL). */
  readonly sliceRetentionMs: number;
}

/** No slice exists at this instant. */
const NEW_SLICE = 'attribute_not_exists(jobId)';
/** An older generation left this instant without a ledger record: the new generation may write it. */
const OLDER_GENERATION_UNRUN =
  '(#status IN (:enqueued, :failed, :skipped) AND (attribute_not_exists(generation) OR generation < :generation))';
/** What the last run of an older generation left behind: an unclaimed slice has no lease (its receive count too) nor `claimedFrom`. */
const LAST_RUN_FIELDS = [
  '#owner',
  'leaseExpiresAt',
  'leaseMessageId',
  'leaseReceiveCount',
  'claimedFrom',
  'nextAttemptAt',
  'lastError',
  'startedAt',
  'finishedAt',
  'expiresAt',
  'skipReason',
  'operatorSlot',
  'bufferedAt',
];

/** ENQUEUE, as a transaction item; `extra` adds the operator's record, or a triggered slot's own payload. */
export function slicePut(
  tables: SliceTables,
  run: SliceDefinition,
  slice: NewSlice,
  now: number,
  extra: Record<string, unknown> = {},
): TransactWriteItem {
  return recreatableSliceUpdate(tables, slice, {
    ...definitionFields(run, now),
    status: SliceStatus.Enqueued,
    attempts: 0,
    sweepShard: run.shard,
    sweepAt: slice.sweepAt,
    ...extra,
  });
}

/** ENQUEUE, one request. @returns whether the slice was created (by this call: a resend after a lost reply finds its own). */
export function enqueueSlice(
  dynamo: DynamoDBClient,
  tables: SliceTables,
  run: SliceDefinition,
  slice: NewSlice,
  now: number,
): Promise<boolean> {
  return send(
    dynamo,
    tables,
    slicePut(tables, run, slice, now),
    (old) =>
      old.status?.S === SliceStatus.Enqueued &&
      old.generation?.N === String(run.generation) &&
      old.createdAt?.N === String(now) &&
      old.sweepAt?.N === String(slice.sweepAt),
  );
}

/**
 * RANGE: the MISSED record of an outage, or the SKIPPED record of due occurrences the misfire policy does not run.
 * A refusal is judged from the item the condition saw: this generation's range record (another scan's) or another slice.
 */
export async function recordRange(
  dynamo: DynamoDBClient,
  tables: SliceTables,
  jobId: string,
  run: SliceDefinition,
  range: MissedRange | SkippedRange,
  now: number,
): Promise<RangeRecordOutcome> {
  const status = 'reason' in range ? { status: SliceStatus.Skipped, skipReason: range.reason } : { status: SliceStatus.Missed };
  const key = { jobId, scheduledAt: range.from };
  const item = recreatableSliceUpdate(tables, key, {
    ...definitionFields(run, now),
    payload: undefined,
    ...status,
    attempts: 0,
    missedUntil: range.to,
    missedCount: range.count,
    finishedAt: now,
  });
  try {
    await onTable(tables.slicesTable, () =>
      dynamo.send(new UpdateItemCommand({ ...(item.Update as UpdateItemCommandInput), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
    );
    return { outcome: 'written' };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const seen = error.Item ? toSlice(error.Item) : await readSlice(dynamo, tables.slicesTable, key);
    return rangeRecordOutcome(seen, run.generation);
  }
}

/**
 * SETTLE: SKIPPED with `reason`, in history for the retention. @returns whether it was written (by this call: a
 * resend of it after its first try landed unanswered finds its own record and counts it, as settle-pending-slices.ts does).
 */
export function settleAbsentSlice(
  dynamo: DynamoDBClient,
  tables: SliceTables,
  key: SliceKey,
  run: SliceDefinition,
  reason: SkipReason,
  now: number,
): Promise<boolean> {
  return send(
    dynamo,
    tables,
    recreatableSliceUpdate(tables, key, {
      ...definitionFields(run, now),
      status: SliceStatus.Skipped,
      skipReason: reason,
      attempts: 0,
      finishedAt: now,
      expiresAt: Math.floor((now + tables.sliceRetentionMs) / 1000),
    }),
    (old) =>
      old.status?.S === SliceStatus.Skipped &&
      old.skipReason?.S === reason &&
      old.generation?.N === String(run.generation) &&
      old.finishedAt?.N === String(now),
  );
}

/** The generation's definition, and no range or sweep attribute an older item at the instant may have had (writers set their own). */
function definitionFields(run: SliceDefinition, now: number): Record<string, unknown> {
  return {
    ...sliceDefinitionFields(run, now),
    missedUntil: undefined,
    missedCount: undefined,
    sweepShard: undefined,
    sweepAt: undefined,
  };
}

/** @param ownWrite recognises, in the item a failed condition returns, this very write landed by an earlier try of the request. */
async function send(
  dynamo: DynamoDBClient,
  tables: SliceTables,
  item: TransactWriteItem,
  ownWrite?: (old: Record<string, AttributeValue>) => boolean,
): Promise<boolean> {
  const update = item.Update;
  if (update === undefined) throw new TypeError('a slice write is an Update');
  try {
    await onTable(tables.slicesTable, () =>
      dynamo.send(new UpdateItemCommand({ ...update, ...(ownWrite && { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }) })),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return ownWrite !== undefined && error.Item !== undefined && ownWrite(error.Item);
    throw error;
  }
}

/**
 * Writes `fields` (an undefined one is removed) on an instant that has no
 * slice or only an older generation's unrun one; the fence is kept (it only
 * ever grows), the last run's lease, owner and error are removed.
 */
function recreatableSliceUpdate(tables: SliceTables, key: SliceKey, fields: Record<string, unknown>): TransactWriteItem {
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
