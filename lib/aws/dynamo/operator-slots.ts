/**
 * OPERATOR SLOTS — an operator adds a slot to a job: trigger (an extra slot
 * now) or backfill (a past occurrence). Each slot is written by the
 * scanner's own slice builder (create-slices.ts `slicePut`: same fields, same
 * condition), so it is claimed, fenced and committed like any slice.
 *
 * TRIGGER, one TransactWriteItems:
 *   [0] slices[jobId, requestMarkerInstant(R)]  (the request's marker)
 *       Condition: attribute_not_exists: the first try of request R
 *       Effect:    requestId, slotAt (the slot's instant), actor, reason, TTL
 *   [1] slices[jobId, triggerInstant(R, now)]   (the slot, sub-second)
 *       Condition: as the scanner's (no slice there)
 *       Effect:    ENQUEUED, this generation, operatorSlot, own payload if given
 *   [2] jobs[jobId]  ConditionCheck: live (not a tombstone), generation = the one read
 * Outcome: created (also when this call's own first send landed and its reply
 * was lost: the marker's createdAt is this call's); or the marker exists (a
 * retry of R): the slot its first try made; or the offset was taken by another trigger this second: the next
 * offset; or the job changed: read again; busy: backoff, then StoreBusyError.
 *
 * BACKFILL, per occurrence T, one TransactWriteItems:
 *   [0] slices[jobId, T]  as the scanner writes it, plus operatorSlot
 *   [1] jobs[jobId]       ConditionCheck as above
 * Outcome: created; or a slice exists at T (run, running, or recorded:
 * left as it is); the job changed: read again.
 */
import { GetItemCommand, TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { Random } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { CronfenceError, JobNotFoundError, StoreBusyError } from '../../core/errors.ts';
import { requestMarkerInstant, triggerInstant, TRIGGER_OFFSET_TRIES, type OperatorSlot } from '../../core/operator.ts';
import { definitionOf, type StoredJob } from '../../core/job-record.ts';
import { sweepAtFor, SliceStatus, type SliceKey } from '../../core/slice.ts';
import { slicePut, type SliceTables } from './create-slices.ts';
import { busyBackoffMs, cancellationCodes, isBusyCancellation, onTables } from './errors.ts';
import { fromItem, sliceKeyItem, toItem } from './items.ts';

export interface OperatorTables extends SliceTables {
  readonly jobsTable: string;
  /** Slack after a slot's second before the sweep re-sends it. */
  readonly sweepGraceMs: number;
}

export interface TriggerWrite {
  readonly requestId: string;
  readonly note: OperatorSlot;
  /** The slot's own payload; absent: the job's. */
  readonly payload?: Record<string, unknown>;
}

export type SlotOutcome =
  | { readonly kind: 'created'; readonly key: SliceKey }
  /** trigger: a retry of a request that already made its slot; backfill: a slice was already at the instant. */
  | { readonly kind: 'exists'; readonly key: SliceKey }
  /** The job changed (or went) between the read and the write: read it again. */
  | { readonly kind: 'job-changed' };

const BUSY_TRIES = 4;

/** Adds the triggered slot of request `write.requestId`, or finds the one its first try added. */
export async function writeTriggerSlot(
  dynamo: DynamoDBClient,
  tables: OperatorTables,
  job: StoredJob,
  write: TriggerWrite,
  now: number,
  clock: Clock,
  random: Random,
): Promise<SlotOutcome> {
  const marker = { jobId: job.id, scheduledAt: requestMarkerInstant(write.requestId) };
  for (let offsetTry = 0; offsetTry < TRIGGER_OFFSET_TRIES; offsetTry++) {
    const key = { jobId: job.id, scheduledAt: triggerInstant(write.requestId, now, offsetTry) };
    const items = [
      markerPut(tables, marker, key, write, now),
      slotPut(tables, job, key, now, write.note, write.payload),
      liveJobCheck(tables, job),
    ];
    const codes = await transact(dynamo, tables, items, `trigger of job ${job.id}`, clock, random);
    if (codes === undefined) return { kind: 'created', key };
    if (codes[0] !== undefined) {
      const marked = await markedSlot(dynamo, tables, marker, write.requestId);
      // This very call's first send landed and its reply was lost (the SDK sent it again): created, by this call.
      return { kind: marked.createdAt === now ? 'created' : 'exists', key: marked.key };
    }
    if (codes[2] !== undefined) return { kind: 'job-changed' };
    // codes[1]: another trigger took this offset in this second; step to the next.
  }
  throw new CronfenceError(
    `trigger of job ${JSON.stringify(job.id)}: ${TRIGGER_OFFSET_TRIES} slots in this second already taken; try again`,
  );
}

/** Adds the slice of past occurrence `scheduledAt`, unless one is there already. */
export async function writeBackfillSlot(
  dynamo: DynamoDBClient,
  tables: OperatorTables,
  job: StoredJob,
  scheduledAt: number,
  note: OperatorSlot,
  now: number,
  clock: Clock,
  random: Random,
): Promise<SlotOutcome> {
  const key = { jobId: job.id, scheduledAt };
  const codes = await transact(
    dynamo,
    tables,
    [slotPut(tables, job, key, now, note), liveJobCheck(tables, job)],
    `backfill of job ${job.id}`,
    clock,
    random,
  );
  if (codes === undefined) return { kind: 'created', key };
  if (codes[1] !== undefined) return { kind: 'job-changed' };
  return { kind: 'exists', key };
}

/** Sends the transaction; undefined when it committed, else the per-item cancellation codes. */
async function transact(
  dynamo: DynamoDBClient,
  tables: OperatorTables,
  items: TransactWriteItem[],
  what: string,
  clock: Clock,
  random: Random,
): Promise<(string | undefined)[] | undefined> {
  for (let busyTries = 1; ; busyTries++) {
    try {
      await onTables(dynamo, { cronfence: [tables.slicesTable, tables.jobsTable] }, () =>
        dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })),
      );
      return undefined;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw error;
      const busy = codes.find(isBusyCancellation);
      if (busy === undefined) {
        const rejected = codes.find((code) => code !== undefined && code !== 'ConditionalCheckFailed');
        if (rejected !== undefined) throw new CronfenceError(`${what} rejected (${rejected})`, { cause: error });
        return codes;
      }
      if (busyTries >= BUSY_TRIES) throw new StoreBusyError(what, busy, { cause: error });
      await clock.sleep(busyBackoffMs(busyTries, random));
    }
  }
}

function slotPut(
  tables: OperatorTables,
  job: StoredJob,
  key: SliceKey,
  now: number,
  note: OperatorSlot,
  payload?: Record<string, unknown>,
): TransactWriteItem {
  const sweepAt = sweepAtFor(SliceStatus.Enqueued, { scheduledAt: key.scheduledAt, now, graceMs: tables.sweepGraceMs });
  return slicePut(tables, definitionOf(job), { ...key, sweepAt }, now, { operatorSlot: note, ...(payload !== undefined && { payload }) });
}

function markerPut(tables: OperatorTables, marker: SliceKey, slot: SliceKey, write: TriggerWrite, now: number): TransactWriteItem {
  return {
    Put: {
      TableName: tables.slicesTable,
      Item: toItem({
        ...marker,
        requestId: write.requestId,
        slotAt: slot.scheduledAt,
        actor: write.note.actor,
        reason: write.note.reason,
        createdAt: now,
        expiresAt: Math.ceil((now + tables.sliceRetentionMs) / 1000),
      }),
      ConditionExpression: 'attribute_not_exists(jobId)',
    },
  };
}

/** The job is live (a tombstone has `deleted`) and still of the generation the slot copies. */
function liveJobCheck(tables: OperatorTables, job: StoredJob): TransactWriteItem {
  return {
    ConditionCheck: {
      TableName: tables.jobsTable,
      Key: { jobId: { S: job.id } },
      ConditionExpression: 'attribute_exists(jobId) AND attribute_not_exists(deleted) AND generation = :generation',
      ExpressionAttributeValues: { ':generation': { N: String(job.generation) } },
    },
  };
}

async function markedSlot(
  dynamo: DynamoDBClient,
  tables: OperatorTables,
  marker: SliceKey,
  requestId: string,
): Promise<{ key: SliceKey; createdAt: number }> {
  const result = await dynamo.send(new GetItemCommand({ TableName: tables.slicesTable, Key: sliceKeyItem(marker), ConsistentRead: true }));
  const raw = result.Item ? fromItem(result.Item) : undefined;
  if (raw === undefined) throw new JobNotFoundError(marker.jobId);
  // 48-bit markers: two request ids meeting on one is not expected, but it must not hand back someone else's slot.
  if (raw.requestId !== requestId)
    throw new CronfenceError(`request id ${JSON.stringify(requestId)} collides with ${JSON.stringify(raw.requestId)}; use another`);
  return { key: { jobId: marker.jobId, scheduledAt: raw.slotAt as number }, createdAt: raw.createdAt as number };
}
