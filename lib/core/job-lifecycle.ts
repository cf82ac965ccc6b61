/**
 * The job lifecycle: what a put, pause, resume or delete does to a job,
 * decided here in pure code; JobRepository only translates it into one
 * version-conditioned write and a settle of older slices.
 *
 * generation: + 1 on every change of definition (schedule, zone, DST policy,
 *   handler, payload, policies, enabled) and on pause, resume and delete. It survives a
 *   delete (the item stays as a tombstone), so a re-added job never reuses one.
 * Slices carry the generation that created them. After a change:
 *   - every pending slice (ENQUEUED, FAILED awaiting retry) of an older
 *     generation is SKIPPED with the reason, overdue ones too, so no slice of
 *     the old definition starts once the call has returned;
 *   - the scanner may re-create a slice at an instant that an older generation
 *     left without a ledger record (ENQUEUED, FAILED, SKIPPED), so a job that
 *     is re-enabled or re-added runs every occurrence from then on;
 *   - nextFireAt is the first occurrence at or after the change.
 * A slice already RUNNING when the call is made completes under the old
 * definition (its claim came first).
 */
import { JobNotFoundError, JobOwnershipError } from './errors.ts';
import type { JobOrigin, JobSpec } from './job-spec.ts';
import type { OperatorNote, PauseState } from './operator.ts';
import type { StoredJob } from './ports.ts';
import { planAdvance, type AdvancePlan } from './advance-plan.ts';
import { nextOccurrenceAtOrAfter, scheduleOf } from './schedule.ts';
import { MAX_SLICES_PER_ADVANCE } from './slice-transitions.ts';
import { shardOf } from './shard.ts';

/** "Never fires again": stays out of every due window. */
export const NEVER = Number.MAX_SAFE_INTEGER;

/**
 * Why a slice was settled SKIPPED without running: a lifecycle change, the
 * job's misfire policy (`misfire`, advance-plan.ts) or its overlap policy
 * (`overlap`: another run was ahead; `replaced`: fenced out by a newer run, overlap-policy.ts).
 */
export type SkipReason = 'paused' | 'disabled' | 'deleted' | 'superseded' | 'misfire' | 'overlap' | 'replaced';

/** What is left of a deleted job: enough to keep its generation and version growing. */
export interface JobTombstone {
  readonly id: string;
  readonly deleted: true;
  readonly generation: number;
  readonly version: number;
  readonly updatedAt: number;
}

export type JobRecord = StoredJob | JobTombstone;

export function isTombstone(record: JobRecord | undefined): record is JobTombstone {
  return record !== undefined && 'deleted' in record && record.deleted === true;
}

export interface LifecycleChange<T extends JobRecord = JobRecord> {
  /** What to store, on condition that the stored version is still the one read. */
  readonly next: T;
  /** Settle pending slices of generations older than `next.generation`, with this reason. */
  readonly settle: SkipReason;
}

/** The job as `put(spec)` leaves it, or undefined when the stored definition is already `spec`. */
export function planPut(spec: JobSpec, previous: JobRecord | undefined, now: number, shardCount: number): LifecycleChange<StoredJob> | undefined {
  const existing = isTombstone(previous) ? undefined : previous;
  assertOwner(existing, spec.origin);
  if (existing && sameDefinition(existing, spec) && existing.shard === shardOf(spec.id, shardCount)) return undefined;
  // A change to a job an operator paused, that keeps it paused, keeps the pause (its end, who and why).
  const pause = existing?.pause !== undefined && !existing.enabled && !spec.enabled ? existing.pause : undefined;
  const next: StoredJob = {
    ...spec,
    ...(pause && { pause }),
    shard: shardOf(spec.id, shardCount),
    nextFireAt: firstAtOrAfter(spec, Math.max(now, pause?.until ?? now)),
    generation: (previous?.generation ?? 0) + 1,
    version: (previous?.version ?? 0) + 1,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  return { next, settle: spec.enabled ? 'superseded' : 'disabled' };
}

/**
 * Pause: pending slices are skipped. Without `until` the job leaves the due
 * index; with it, the job stays in the index from its first occurrence at or
 * after `until`, so the scanner takes it up again by itself (see
 * {@link isActiveAt}). Pausing again with another end or reason replaces the
 * pause (a new generation, so slices made for the old end are skipped too).
 * Undefined when already paused exactly so.
 */
export function planPause(job: StoredJob, now: number, pause?: PauseState): LifecycleChange<StoredJob> | undefined {
  if (!job.enabled && samePause(job.pause, pause)) return undefined;
  const nextFireAt = pause?.until !== undefined ? firstAtOrAfter(job, pause.until) : job.nextFireAt;
  return { next: { ...bumped(job, now), enabled: false, nextFireAt, pause }, settle: 'paused' };
}

/**
 * Resume: back in the due index from the next occurrence on. A timed pause
 * whose end has passed is already running again (the scanner took it up):
 * resuming it only clears the record, same generation, so none of the slices
 * made since its end are skipped. Undefined when already enabled.
 */
export function planResume(job: StoredJob, now: number, note?: OperatorNote): LifecycleChange<StoredJob> | undefined {
  if (job.enabled) return undefined;
  const resumed = note === undefined ? {} : { resumed: note };
  if (isActiveAt(job, now)) {
    return { next: { ...job, version: job.version + 1, updatedAt: now, enabled: true, pause: undefined, ...resumed }, settle: 'superseded' };
  }
  return { next: { ...bumped(job, now), enabled: true, nextFireAt: firstAtOrAfter(job, now), pause: undefined, ...resumed }, settle: 'superseded' };
}

/** Is the job running at `now`: enabled, or paused with an end that has passed. */
export function isActiveAt(job: Pick<StoredJob, 'enabled' | 'pause'>, now: number): boolean {
  return job.enabled || (job.pause?.until !== undefined && now >= job.pause.until);
}

/** Does the job belong in the due index: enabled, or paused with an end (it is due again from then). */
export function inDueIndex(job: Pick<StoredJob, 'enabled' | 'pause'>): boolean {
  return job.enabled || job.pause?.until !== undefined;
}

/** Since when the job has been running without a break (for the dead-man's switch): its last change, or its pause's end. */
export function activeSince(job: Pick<StoredJob, 'updatedAt' | 'pause'>): number {
  return Math.max(job.updatedAt, job.pause?.until ?? 0);
}

function samePause(a: PauseState | undefined, b: PauseState | undefined): boolean {
  return a?.until === b?.until && a?.reason === b?.reason;
}

/** A put from `writer` may replace only a job of its own origin (a job stored before origins existed has none). @throws {JobOwnershipError} */
export function assertOwner(job: StoredJob | undefined, writer: JobOrigin | undefined): void {
  if (job?.origin !== undefined && writer !== undefined && job.origin !== writer) throw new JobOwnershipError(job.id, job.origin, writer);
}

/** Delete: a tombstone keeps the generation; pending slices are skipped; history stays. */
export function planDelete(job: StoredJob, now: number): LifecycleChange<JobTombstone> {
  return {
    next: { id: job.id, deleted: true, generation: job.generation + 1, version: job.version + 1, updatedAt: now },
    settle: 'deleted',
  };
}

/**
 * A one-time job with `afterOneTime: 'delete'` whose slot of generation
 * `generation` is final: deleted, unless it was redefined since (a job put
 * again under the same id is a new definition and stays). Undefined: nothing to do.
 */
export function planDeleteAfterOneTimeRun(record: JobRecord | undefined, generation: number, now: number): LifecycleChange<JobTombstone> | undefined {
  if (record === undefined || isTombstone(record) || record.generation !== generation) return undefined;
  if (record.policies.afterOneTime !== 'delete') return undefined;
  return planDelete(record, now);
}

/** Does the stored job already have this definition? (Bookkeeping fields aside.) */
export function sameDefinition(job: JobSpec, spec: JobSpec): boolean {
  return (
    job.schedule === spec.schedule &&
    job.timeZone === spec.timeZone &&
    job.handler === spec.handler &&
    job.enabled === spec.enabled &&
    // A job stored before origins existed takes its writer's origin on its next put (one new generation).
    job.origin === spec.origin &&
    job.group === spec.group &&
    canonicalJson(scheduleOf(job).dst) === canonicalJson(scheduleOf(spec).dst) &&
    canonicalJson(job.payload ?? null) === canonicalJson(spec.payload ?? null) &&
    canonicalJson(job.policies) === canonicalJson(spec.policies)
  );
}

function bumped(job: StoredJob, now: number): StoredJob {
  return { ...job, generation: job.generation + 1, version: job.version + 1, updatedAt: now };
}

function firstAtOrAfter(spec: Pick<JobSpec, 'schedule' | 'timeZone' | 'dst'>, now: number): number {
  return nextOccurrenceAtOrAfter(scheduleOf(spec), now) ?? NEVER;
}

/** JSON with object keys sorted, so key order never makes two equal payloads differ. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}

/**
 * Before a change ends a live definition, the occurrences it already had due
 * but no scan has turned into slices yet (a job changed again within seconds
 * of a resume, a put or a re-add, before the next scan): the repository
 * advances the job over them first, the scanner's way, so the change's
 * settle finds them pending and records them SKIPPED with its reason, instead
 * of leaving due occurrences with no record at all. Undefined when nothing is
 * due behind the job (the usual case: scans run ahead of time).
 */
export function planCatchUpBeforeChange(record: JobRecord | undefined, now: number): AdvancePlan | undefined {
  if (record === undefined || isTombstone(record) || !record.enabled || record.nextFireAt >= now) return undefined;
  return planAdvance({
    schedule: scheduleOf(record),
    nextFireAt: record.nextFireAt,
    now,
    lookaheadMs: 0,
    catchUpWindowMs: record.policies.catchUpWindowMs,
    limit: MAX_SLICES_PER_ADVANCE,
    misfire: record.policies.misfire,
  });
}

/** The live job a pause, resume or delete acts on. @throws {JobNotFoundError} */
export function existingJob(id: string, record: JobRecord | undefined): StoredJob {
  if (record === undefined || isTombstone(record)) throw new JobNotFoundError(id);
  return record;
}
