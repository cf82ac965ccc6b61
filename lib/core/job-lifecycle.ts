/**
 * The job lifecycle: what a put, pause, resume or delete does to a job,
 * decided here in pure code; the repository only translates it into one
 * version-conditioned write, an inbox entry for the scanners, and the
 * settling of the generation it ended.
 *
 * generation: + 1 on every change of definition (schedule, zone, DST policy,
 *   handler, payload, policies, enabled) and on pause, resume and delete. It survives a
 *   delete (the item stays as a tombstone), so a re-added job never reuses one.
 * Slices carry the generation they ran (or were skipped) under. After a change:
 *   - the new generation, if it runs, goes to its shard's wheel inbox from
 *     its first occurrence at or after the change (`nextFireAt`), and the
 *     next scan takes it up (core/wheel.ts);
 *   - every pending slice (ENQUEUED, FAILED awaiting retry) of an older
 *     generation is SKIPPED with the change's reason, and so is every
 *     occurrence the ended generation had due with no slice yet
 *     ({@link dueWithoutSlice}), so no due occurrence of the old definition
 *     is left without a record and none starts once the call has returned;
 *   - a message of an older generation that is claimed later finds the job
 *     moved on and skips its slice ({@link supersededReason});
 *   - a newer generation's message re-creates an instant an older one left
 *     SKIPPED (core/slice.ts `isRecreatable`), so a job that is re-enabled or
 *     re-added runs every occurrence from then on.
 * A slice already RUNNING when the call is made completes under the old
 * definition (its claim came first).
 */
import { JobNotFoundError, JobOwnershipError } from './errors.ts';
import type { JobOrigin, JobSpec } from './job-spec.ts';
import type { OperatorNote, PauseState } from './operator.ts';
import { isTombstone, type JobRecord, type JobTombstone, type SkipReason, type StoredJob } from './job-record.ts';
import { NEVER } from './advance-plan.ts';
import { nextOccurrenceAtOrAfter, occurrencesBetween, scheduleOf } from './schedule.ts';
import type { Slice } from './slice.ts';
import { recordStandingAt } from './slice-transitions.ts';
import { shardOf } from './shard.ts';
import type { WheelEntry } from './wheel.ts';

export { NEVER } from './advance-plan.ts';

export interface LifecycleChange<T extends JobRecord = JobRecord> {
  /** What to store, on condition that the stored version is still the one read. */
  readonly next: T;
  /** Settle pending slices of generations older than `next.generation`, with this reason. */
  readonly settle: SkipReason;
}

/** The job as `put(spec)` leaves it, or undefined when the stored definition is already `spec`. */
export function planPut(
  spec: JobSpec,
  previous: JobRecord | undefined,
  now: number,
  shardCount: number,
): LifecycleChange<StoredJob> | undefined {
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
    changeReason: spec.enabled ? 'superseded' : 'disabled',
  };
  return { next, settle: next.changeReason ?? 'superseded' };
}

/**
 * Pause: pending slices are skipped. Without `until` the scanners stop
 * sending the job; with it, it goes to the wheel's inbox from its first
 * occurrence at or after `until`, so the scanner takes it up again by itself (see
 * {@link isActiveAt}). Pausing again with another end or reason replaces the
 * pause (a new generation, so slices made for the old end are skipped too).
 * Undefined when already paused exactly so.
 */
export function planPause(job: StoredJob, now: number, pause?: PauseState): LifecycleChange<StoredJob> | undefined {
  if (!job.enabled && samePause(job.pause, pause)) return undefined;
  const nextFireAt = pause?.until !== undefined ? firstAtOrAfter(job, pause.until) : job.nextFireAt;
  return { next: { ...bumped(job, now, 'paused'), enabled: false, nextFireAt, pause }, settle: 'paused' };
}

/**
 * Resume: back in the schedule (the wheel's inbox) from the next occurrence on. A timed pause
 * whose end has passed is already running again (the scanner took it up):
 * resuming it only clears the record, same generation, so none of the slices
 * made since its end are skipped. Undefined when already enabled.
 */
export function planResume(job: StoredJob, now: number, note?: OperatorNote): LifecycleChange<StoredJob> | undefined {
  if (job.enabled) return undefined;
  const resumed = note === undefined ? {} : { resumed: note };
  if (isActiveAt(job, now)) {
    return {
      next: { ...job, version: job.version + 1, updatedAt: now, enabled: true, pause: undefined, ...resumed },
      settle: 'superseded',
    };
  }
  return {
    next: { ...bumped(job, now, 'superseded'), enabled: true, nextFireAt: firstAtOrAfter(job, now), pause: undefined, ...resumed },
    settle: 'superseded',
  };
}

/** Is the job running at `now`: enabled, or paused with an end that has passed. */
export function isActiveAt(job: Pick<StoredJob, 'enabled' | 'pause'>, now: number): boolean {
  return job.enabled || (job.pause?.until !== undefined && now >= job.pause.until);
}

/** Is the job in the schedule (the scanners send it): enabled, or paused with an end (it is due again from then). */
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
    next: { id: job.id, deleted: true, generation: job.generation + 1, version: job.version + 1, updatedAt: now, changeReason: 'deleted' },
    settle: 'deleted',
  };
}

/**
 * A one-time job with `afterOneTime: 'delete'` whose slot of generation
 * `generation` is final: deleted, unless it was redefined since (a job put
 * again under the same id is a new definition and stays). Undefined: nothing to do.
 */
export function planDeleteAfterOneTimeRun(
  record: JobRecord | undefined,
  generation: number,
  now: number,
): LifecycleChange<JobTombstone> | undefined {
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

function bumped(job: StoredJob, now: number, changeReason: SkipReason): StoredJob {
  return { ...job, generation: job.generation + 1, version: job.version + 1, updatedAt: now, changeReason };
}

function firstAtOrAfter(spec: Pick<JobSpec, 'schedule' | 'timeZone' | 'dst'>, now: number): number {
  return nextOccurrenceAtOrAfter(scheduleOf(spec), now) ?? NEVER;
}

/** JSON with object keys sorted, so key order never makes two equal payloads differ. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
}

/**
 * The inbox entry a stored record needs: its generation from its first
 * occurrence, while it is in the schedule (enabled, or paused with an end).
 * Undefined for a tombstone, a paused or disabled job, or one that never fires again.
 */
export function inboxEntryOf(record: JobRecord): WheelEntry | undefined {
  if (isTombstone(record) || !inDueIndex(record) || record.nextFireAt >= NEVER) return undefined;
  return { jobId: record.id, generation: record.generation, from: record.nextFireAt };
}

/**
 * The job's next occurrence at or after `now` (never before its generation's
 * first), or NEVER when it has none left (a one-time job after its slot).
 * What `cronfence jobs list` shows; the wheel, not the job, tracks what was sent.
 */
export function nextOccurrenceOf(job: Pick<StoredJob, 'schedule' | 'timeZone' | 'dst' | 'nextFireAt'>, now: number): number {
  if (job.nextFireAt >= NEVER) return NEVER;
  return nextOccurrenceAtOrAfter(scheduleOf(job), Math.max(now, job.nextFireAt)) ?? NEVER;
}

/** Occurrences of one generation in `[from, to)`: what a change checks for a record. */
export interface DueOccurrences {
  readonly from: number;
  readonly to: number;
  readonly occurrences: readonly number[];
}

/** Most occurrences a change settles (a per-second job's 10-minute catch-up window is 600). */
export const MAX_SETTLED_OCCURRENCES = 3600;

/**
 * The occurrences the generation a change ends had due before the change,
 * within its catch-up window: each must have a record. Those with no slice
 * (their message is on its way or was lost, or no scan had sent them yet)
 * are written SKIPPED with the change's reason, unless a claim creates the
 * slice first. Undefined when the record was not running (a tombstone,
 * paused, disabled), and when its stored row cannot be planned: the scans set
 * such a job aside (core/set-aside.ts), and the change that replaces or
 * deletes the row must not fail on it.
 */
export function dueWithoutSlice(previous: JobRecord | undefined, now: number): DueOccurrences | undefined {
  if (previous === undefined || isTombstone(previous) || !isActiveAt(previous, now)) return undefined;
  try {
    const from = Math.max(activeSince(previous), now - previous.policies.catchUpWindowMs);
    if (!(from < now)) return undefined;
    return { from, to: now, occurrences: occurrencesBetween(scheduleOf(previous), from, now, MAX_SETTLED_OCCURRENCES) };
  } catch {
    return undefined;
  }
}

/**
 * Of `due`, the instants of `generation` with no record standing for them in
 * `slices` (`recordStandingAt`: an older generation's SKIPPED slice is no record of this one's).
 */
export function withoutRecord(due: readonly number[], generation: number, slices: readonly Slice[]): number[] {
  const recordAt = recordStandingAt(slices, generation);
  return due.filter((at) => recordAt(at) === undefined);
}

/**
 * Why a slice claimed for a run of generation `slice.generation` must not
 * run: the job has moved on since its message was sent (a change, a pause, a
 * delete), with the reason the change settles older slices with. Undefined:
 * it is the job's current generation, and runs.
 */
export function supersededReason(record: JobRecord | undefined, slice: Pick<Slice, 'generation'>): SkipReason | undefined {
  if (record === undefined || isTombstone(record)) return 'deleted';
  if (record.generation === slice.generation) return undefined;
  return record.changeReason ?? (record.enabled ? 'superseded' : 'paused');
}

/** The live job a pause, resume or delete acts on. @throws {JobNotFoundError} */
export function existingJob(id: string, record: JobRecord | undefined): StoredJob {
  if (record === undefined || isTombstone(record)) throw new JobNotFoundError(id);
  return record;
}
