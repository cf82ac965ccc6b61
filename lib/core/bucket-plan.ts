/**
 * The pure part of a scan's work on one job in one wheel bucket
 * (engine/scanner.ts): its plans from the first occurrence not yet sent
 * (core/advance-plan.ts: catch-up window, misfire policy), the occurrences
 * to send and where it is due next. Nothing here writes, so the scanner can
 * judge a job's stored row before it writes anything for it: whatever this
 * throws is the row's fault (core/set-aside.ts).
 */
import { NEVER, planAdvance, type AdvancePlan, type MissedRange } from './advance-plan.ts';
import { jitterOffsetMs } from './jitter.ts';
import type { StoredJob } from './job-record.ts';
import { nextOccurrenceAtOrAfter, scheduleOf } from './schedule.ts';
import { LEASE_EXPIRY_MARGIN_MS } from './slice.ts';
import { WHEEL_BUCKET_MS } from './wheel.ts';

/** Occurrences one plan may return; a bucket of a per-second job holds five, so this only bounds a runaway. */
const MAX_OCCURRENCES_PER_PLAN = 1000;

export interface BucketPlan {
  /** The first plan: its MISSED and misfire SKIPPED ranges are recorded. */
  readonly first: AdvancePlan | undefined;
  /** The occurrences to send, ascending. */
  readonly occurrences: number[];
  /** The first occurrence not sent (or NEVER). */
  readonly next: number;
  /** The job's jitter offset (ms). */
  readonly offset: number;
}

/**
 * The job's occurrences from `from` whose start falls before the end of
 * `bucket`. Throws whatever the row makes it throw (a cron or zone that does
 * not parse, a missing field).
 */
export function planBucket(job: StoredJob, from: number, bucket: number, now: number): BucketPlan {
  assertRowShape(job);
  const offset = jitterOffsetMs(job.id, job.policies.jitterMs);
  const schedule = scheduleOf(job);
  const occurrences: number[] = [];
  let first: AdvancePlan | undefined;
  let next = from;
  while (next < NEVER && next + offset < bucket + WHEEL_BUCKET_MS) {
    const plan = planAdvance({
      schedule,
      nextFireAt: next,
      now,
      lookaheadMs: bucket + WHEEL_BUCKET_MS - offset - now,
      catchUpWindowMs: job.policies.catchUpWindowMs,
      limit: MAX_OCCURRENCES_PER_PLAN,
      misfire: job.policies.misfire,
    });
    first ??= plan;
    occurrences.push(...plan.occurrences);
    if (plan.nextFireAt <= next) break;
    next = plan.nextFireAt;
  }
  return { first, occurrences, next, offset };
}

/**
 * `plan` once another scan has recorded one of its ranges (missed or misfire) up to `until` (exclusive), later than
 * this plan's own (that scan's clock ran ahead of this one's): nothing that range covers is sent, and the job resumes
 * after it, in this bucket or a later one.
 */
export function afterRecordedRange(job: StoredJob, plan: BucketPlan, until: number): BucketPlan {
  if (plan.next >= until) return { ...plan, occurrences: plan.occurrences.filter((at) => at >= until) };
  return { ...plan, occurrences: [], next: nextOccurrenceAtOrAfter(scheduleOf(job), until) ?? NEVER };
}

/**
 * When another scan recorded this plan's MISSED range first with another end, on a clock within the promised skew of
 * this one's (two clocks each within ±2 s: LEASE_EXPIRY_MARGIN_MS apart at most): that scan's `now`, which its end
 * gives (a MISSED range ends where the catch-up window starts). Planned at that `now`, a scan records and sends what
 * the first one did: its misfire range starts at the same occurrence (one record, where its own clock would have
 * written a second that overlaps), and nothing that range covers is sent. A record further off is no racing scan's.
 */
export function racingScanNow(job: StoredJob, missed: MissedRange, recordedUntil: number): number | undefined {
  const apart = recordedUntil - missed.to;
  if (apart === 0 || Math.abs(apart) > LEASE_EXPIRY_MARGIN_MS) return undefined;
  return recordedUntil + job.policies.catchUpWindowMs;
}

/**
 * The fields a scan reads, of the types it reads them as: a row edited by
 * hand or by a migration may hold anything. @throws {TypeError} naming the field.
 */
export function assertRowShape(job: StoredJob): void {
  const fields: [string, unknown, string][] = [
    ['schedule', job.schedule, 'string'],
    ['timeZone', job.timeZone, 'string'],
    ['handler', job.handler, 'string'],
    ['enabled', job.enabled, 'boolean'],
    ['policies', job.policies, 'object'],
  ];
  for (const [field, value, type] of fields) {
    if (typeof value !== type || value === null)
      throw new TypeError(`stored ${field} ${JSON.stringify(value) ?? 'missing'} is not a ${type}`);
  }
}
