/**
 * The dead-man's switch: a job that has produced no final slot (SUCCEEDED,
 * DEAD, SKIPPED or MISSED: each is on record and says why) within k of its
 * intervals has gone silent, the failure every scheduler we compared lets
 * pass unseen. Pure; the watch (lib/aws/dead-man-watch.ts) reads the job and
 * its latest final slot, and raises the `stale` event and metric.
 *
 * The clock starts at the later of the job's latest final slot and the
 * moment it last became active (created, changed, resumed, or its timed
 * pause ended), so a pause is never counted as silence:
 *
 *   reference ──── k × interval ──── + timeout ──▶ deadline
 *       │                                            │
 *   last final slot (or activeSince)          no final slot yet: stale
 *
 * The interval is the gap between the first two occurrences after the
 * reference (a cron's gaps vary; this is the one the job is in). The job's
 * timeout is added: a slot may take that long to become final.
 */
import { activeSince, isActiveAt } from './job-lifecycle.ts';
import type { StoredJob } from './ports.ts';
import { occurrencesBetween, scheduleOf } from './schedule.ts';

/** @default 2: one whole occurrence may be late before the job is called silent. */
export const DEFAULT_DEAD_MAN_FACTOR = 2;
/** How far ahead the next two occurrences are looked for: a yearly job's interval still fits. */
const INTERVAL_HORIZON_MS = 400 * 86_400_000;

export type DeadManVerdict =
  /** Paused (or deleted): silence is expected. */
  | { readonly kind: 'inactive' }
  /** No occurrence after the reference: a one-time job that ran, or a schedule with nothing left. */
  | { readonly kind: 'done' }
  | { readonly kind: 'ok'; readonly deadline: number }
  | {
      readonly kind: 'stale';
      /** Since when the job has been silent (its last final slot, or since it became active). */
      readonly silentSince: number;
      readonly deadline: number;
      readonly intervalMs: number;
      /** The latest final slot's scheduled time, if it had one. */
      readonly lastFinalAt: number | undefined;
    };

export interface DeadManInput {
  readonly job: Pick<StoredJob, 'schedule' | 'timeZone' | 'dst' | 'enabled' | 'pause' | 'updatedAt' | 'createdAt' | 'policies'>;
  /** Scheduled time of the job's latest final slot, if any. */
  readonly lastFinalAt: number | undefined;
  readonly now: number;
  /** k. @default DEFAULT_DEAD_MAN_FACTOR */
  readonly factor?: number;
}

export function deadManVerdict(input: DeadManInput): DeadManVerdict {
  const { job, now } = input;
  if (!isActiveAt(job, now)) return { kind: 'inactive' };
  const reference = Math.max(input.lastFinalAt ?? Number.NEGATIVE_INFINITY, activeSince(job));
  const [first, second] = occurrencesBetween(scheduleOf(job), reference + 1, reference + INTERVAL_HORIZON_MS, 2);
  if (first === undefined) return { kind: 'done' };
  const factor = input.factor ?? DEFAULT_DEAD_MAN_FACTOR;
  // One occurrence left within the horizon (a one-time job, a yearly one): it has no interval; due by its own time plus the timeout.
  const intervalMs = second === undefined ? first - reference : second - first;
  const deadline = (second === undefined ? first : Math.max(first, reference + factor * intervalMs)) + job.policies.timeoutMs;
  if (now <= deadline) return { kind: 'ok', deadline };
  return { kind: 'stale', silentSince: reference, deadline, intervalMs, lastFinalAt: input.lastFinalAt };
}

/** Since when to look for a job's latest final slot: nothing older can move its verdict. */
export function deadManLookback(job: Pick<StoredJob, 'updatedAt' | 'pause'>): number {
  return activeSince(job);
}
