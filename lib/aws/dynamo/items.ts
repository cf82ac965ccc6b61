/**
 * Translation between stored DynamoDB items and the core's types. No rules
 * here: only names and shapes.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { isTombstone, type JobRecord, type SkipReason, type StoredJob } from '../../core/job-record.ts';
import type { JobOrigin, JobPolicies } from '../../core/job-spec.ts';
import type { OperatorNote, OperatorSlot, PauseState } from '../../core/operator.ts';
import type { LedgerRecord } from '../../core/ledger.ts';
import { DEFAULT_DST_POLICY, type DstPolicy } from '../../core/schedule.ts';
import type { Slice, SliceDefinition, SliceKey, SliceStatus } from '../../core/slice.ts';

export type Item = Record<string, AttributeValue>;

export function toItem(value: Record<string, unknown>): Item {
  return marshall(value, { removeUndefinedValues: true, convertClassInstanceToMap: false });
}

export function fromItem(item: Item): Record<string, unknown> {
  return unmarshall(item);
}

export function sliceKeyItem(key: SliceKey): Item {
  return { jobId: { S: key.jobId }, scheduledAt: { N: String(key.scheduledAt) } };
}

export function toSlice(item: Item): Slice {
  const raw = fromItem(item);
  return {
    jobId: raw.jobId as string,
    scheduledAt: raw.scheduledAt as number,
    status: raw.status as SliceStatus,
    fence: raw.fence as number,
    owner: raw.owner as string | undefined,
    leaseExpiresAt: raw.leaseExpiresAt as number | undefined,
    leaseMessageId: raw.leaseMessageId as string | undefined,
    claimToken: raw.claimToken as string | undefined,
    leaseReceiveCount: raw.leaseReceiveCount as number | undefined,
    attempts: raw.attempts as number,
    claimedFrom: raw.claimedFrom as SliceStatus | undefined,
    handler: raw.handler as string,
    policies: raw.policies as JobPolicies,
    payload: raw.payload as Record<string, unknown> | undefined,
    shard: raw.shard as number,
    generation: (raw.generation as number | undefined) ?? 0,
    skipReason: raw.skipReason as string | undefined,
    bufferedAt: raw.bufferedAt as number | undefined,
    missedUntil: raw.missedUntil as number | undefined,
    missedCount: raw.missedCount as number | undefined,
    nextAttemptAt: raw.nextAttemptAt as number | undefined,
    lastError: raw.lastError as string | undefined,
    createdAt: raw.createdAt as number,
    startedAt: raw.startedAt as number | undefined,
    finishedAt: raw.finishedAt as number | undefined,
    operator: raw.operatorSlot as OperatorSlot | undefined,
    sweepAt: raw.sweepAt as number | undefined,
  };
}

export function toStoredJob(item: Item): StoredJob {
  const raw = fromItem(item);
  return {
    id: raw.jobId as string,
    schedule: raw.schedule as string,
    timeZone: raw.timeZone as string,
    // Items written before the DST policy existed get the policy they ran under.
    dst: (raw.dst as DstPolicy | undefined) ?? DEFAULT_DST_POLICY,
    handler: raw.handler as string,
    enabled: raw.enabled as boolean,
    payload: raw.payload as Record<string, unknown> | undefined,
    policies: raw.policies as JobPolicies,
    shard: raw.shard as number,
    nextFireAt: raw.nextFireAt as number,
    version: raw.version as number,
    generation: (raw.generation as number | undefined) ?? 0,
    createdAt: raw.createdAt as number,
    updatedAt: raw.updatedAt as number,
    origin: raw.origin as JobOrigin | undefined,
    group: raw.group as string | undefined,
    pause: raw.pause as PauseState | undefined,
    resumed: raw.resumed as OperatorNote | undefined,
    changeReason: raw.changeReason as SkipReason | undefined,
  };
}

/** A job item or a deleted job's tombstone. */
export function toJobRecord(item: Item): JobRecord {
  const raw = fromItem(item);
  if (raw.deleted !== true) return toStoredJob(item);
  return {
    id: raw.jobId as string,
    deleted: true,
    generation: (raw.generation as number | undefined) ?? 0,
    version: raw.version as number,
    updatedAt: raw.updatedAt as number,
    changeReason: raw.changeReason as SkipReason | undefined,
  };
}

export function jobRecordItem(record: JobRecord): Item {
  if (!isTombstone(record)) return jobItem(record);
  return toItem({
    jobId: record.id,
    deleted: true,
    generation: record.generation,
    version: record.version,
    updatedAt: record.updatedAt,
    changeReason: record.changeReason,
  });
}

/** A job item. */
export function jobItem(job: StoredJob): Item {
  return toItem({
    jobId: job.id,
    schedule: job.schedule,
    timeZone: job.timeZone,
    dst: job.dst,
    handler: job.handler,
    enabled: job.enabled,
    payload: job.payload,
    policies: job.policies,
    shard: job.shard,
    nextFireAt: job.nextFireAt,
    version: job.version,
    generation: job.generation,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    origin: job.origin,
    group: job.group,
    pause: job.pause,
    resumed: job.resumed,
    changeReason: job.changeReason,
  });
}

export function toLedgerRecord(item: Item): LedgerRecord {
  const raw = fromItem(item);
  return {
    executionKey: raw.executionKey as string,
    jobId: raw.jobId as string,
    scheduledAt: raw.scheduledAt as number,
    fence: raw.fence as number,
    owner: raw.owner as string,
    committedAt: raw.committedAt as number,
    outcome: raw.outcome as LedgerRecord['outcome'],
    error: raw.error as string | undefined,
  };
}

export function ledgerItem(record: LedgerRecord): Item {
  return toItem({ ...record });
}

/** The attributes a slice of `run`'s generation carries from its creation: its definition, so a later claim needs only the key. */
export function sliceDefinitionFields(run: SliceDefinition, now: number): Record<string, unknown> {
  return {
    generation: run.generation,
    handler: run.handler,
    policies: run.policies,
    payload: run.payload,
    shard: run.shard,
    leaseMs: run.policies.leaseMs,
    createdAt: now,
  };
}
