/**
 * What a work message that names a generation may make a worker do, decided
 * from the job as stored (pure). A message is identity, never authority: the
 * definition a slice is created with is the job's own for that generation,
 * and a slice is created only at an occurrence of it. Any other instant runs
 * only if a slice is already on record there (an operator's trigger or
 * backfill, a reconciled slot): created by code that read the job, never
 * from a message.
 */
import { lateClaim } from './advance-plan.ts';
import { isoSecond } from './execution-key.ts';
import { startAtOf } from './jitter.ts';
import { isActiveAt } from './job-lifecycle.ts';
import { definitionOf, isTombstone, type JobRecord, type StoredJob } from './job-record.ts';
import { occurrencesBetween, scheduleOf } from './schedule.ts';
import { SliceStatus, type Slice, type SliceDefinition, type SliceKey } from './slice.ts';

/** What a claim that finds no slice does with its message: drop it, or refuse it (dead-letter it with the reason). */
export type IfMissing = 'drop' | { readonly refusal: string };

export type ClaimPlan =
  /** An occurrence of the job's current generation: claim it, creating the slice from the stored definition. */
  | { readonly kind: 'create'; readonly run: SliceDefinition }
  /**
   * Claim only a slice already on record. When there is none: `drop` the
   * message (sent for a generation the job has since left: nothing of it is
   * due any more), or refuse it with `refusal` (it names no slot the job has).
   */
  | { readonly kind: 'existing'; readonly ifMissing: IfMissing }
  /** Nothing on record can match it (a generation the job never had): refused without a claim. */
  | { readonly kind: 'refuse'; readonly refusal: string };

/** The plan for a message of `generation` naming `key`, given the job's record read just before. */
export function planClaim(record: JobRecord | undefined, key: SliceKey, generation: number): ClaimPlan {
  if (record === undefined) return { kind: 'existing', ifMissing: { refusal: `no job ${JSON.stringify(key.jobId)} is stored` } };
  if (isTombstone(record) || record.generation > generation) return { kind: 'existing', ifMissing: 'drop' };
  if (record.generation < generation) {
    return { kind: 'refuse', refusal: `generation ${generation} is newer than job ${JSON.stringify(key.jobId)}'s (${record.generation})` };
  }
  const refusal = notAnOccurrence(record, key.scheduledAt);
  return refusal === undefined ? { kind: 'create', run: definitionOf(record) } : { kind: 'existing', ifMissing: { refusal } };
}

/**
 * Why `at` is not an occurrence of the job's current generation, or
 * undefined when it is: the job runs then (enabled, or a timed pause has
 * ended), `at` is not before the generation's first occurrence, and the
 * schedule (cron, `rate`, `at`, in its zone under its DST policy) fires then.
 * A jittered job's slot is still its nominal second (core/jitter.ts).
 */
export function notAnOccurrence(job: StoredJob, at: number): string | undefined {
  const slot = `${isoSecond(at)} (${at})`;
  if (!isActiveAt(job, at))
    return `${slot}: job ${JSON.stringify(job.id)} is ${job.pause || job.changeReason === 'paused' ? 'paused' : 'disabled'} in generation ${job.generation}`;
  if (at < job.nextFireAt) return `${slot} is before generation ${job.generation}'s first occurrence (${isoSecond(job.nextFireAt)})`;
  let fires: boolean;
  try {
    fires = occurrencesBetween(scheduleOf(job), at, at + 1, 1)[0] === at;
  } catch (error) {
    return `${slot}: job ${JSON.stringify(job.id)}'s stored schedule does not parse (${(error as Error).message})`;
  }
  if (fires) return undefined;
  return `${slot} is not an occurrence of generation ${job.generation} (schedule ${JSON.stringify(job.schedule)} in ${job.timeZone}), and no slot is on record there`;
}

/** A claimed first start that must not run late: how it ends, and why (the slice's `skipReason`). */
export type LateStart =
  | { readonly status: typeof SliceStatus.Missed; readonly reason: 'catchUp' }
  | { readonly status: typeof SliceStatus.Skipped; readonly reason: 'misfire' };

/**
 * A scheduled occurrence's first start, claimed at `now` by a claim that
 * created or first took its slice (not a retry, a takeover, a slot an
 * operator made, nor one its overlap policy held back), under the job's
 * catch-up window and misfire policy, as a scan judges what it has not sent
 * (advance-plan.ts `lateClaim`). Undefined: it runs.
 */
export function lateFirstStart(slice: Slice, job: StoredJob, now: number): LateStart | undefined {
  const firstStart =
    slice.claimedFrom === SliceStatus.Enqueued && slice.attempts === 1 && slice.operator === undefined && slice.bufferedAt === undefined;
  if (!firstStart || job.generation !== slice.generation) return undefined;
  const { catchUpWindowMs, misfire } = slice.policies;
  let verdict: ReturnType<typeof lateClaim>;
  try {
    verdict = lateClaim({
      schedule: scheduleOf(job),
      scheduledAt: slice.scheduledAt,
      startAt: startAtOf(slice),
      now,
      catchUpWindowMs,
      misfire,
    });
  } catch {
    // A stored schedule that no longer parses: this slot was created from it, and runs.
    return undefined;
  }
  if (verdict === 'missed') return { status: SliceStatus.Missed, reason: 'catchUp' };
  if (verdict === 'misfire') return { status: SliceStatus.Skipped, reason: 'misfire' };
  return undefined;
}
