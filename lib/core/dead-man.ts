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
 *   reference ── first occurrence ── k × interval ── + jitter + timeout ──▶ deadline
 *
 * - The interval is the gap between the first two occurrences after the
 *   reference (a cron's gaps vary; this is the one the job is in).
 * - A slot starts at its second plus the job's jitter offset (jitter.ts), a
 *   `within-second` one up to a second after that (start-precision.ts), and
 *   may take its timeout to become final: all are added.
 * - A rare schedule (its next two occurrences more than RARE_INTERVAL_MS
 *   apart, or only one left: a yearly, quarterly, 29 February or one-time
 *   job) is due by its first occurrence after the reference: waiting k of
 *   its intervals would be waiting years.
 */
import { jitterOffsetMs } from './jitter.ts';
import { surfaceSlackMs } from './start-precision.ts';
import { activeSince, isActiveAt } from './job-lifecycle.ts';
import type { StoredJob } from './job-record.ts';
import { NEXT_OCCURRENCE_HORIZON_MS, occurrencesBetween, scheduleOf, type Schedule } from './schedule.ts';

/** @default 2: one whole occurrence may be late before the job is called silent. */
export const DEFAULT_DEAD_MAN_FACTOR = 2;
/** Occurrences further apart than this are a rare schedule, due by its own next occurrence (a monthly job is not rare). */
export const RARE_INTERVAL_MS = 32 * 86_400_000;

export type DeadManJob = Pick<StoredJob, 'id' | 'schedule' | 'timeZone' | 'dst' | 'enabled' | 'pause' | 'updatedAt' | 'policies'>;

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
      /** The first occurrence after silentSince: the one that should have become final. */
      readonly overdueAt: number;
    };

/** A job the switch found silent. */
export type StaleJob = Extract<DeadManVerdict, { kind: 'stale' }> & { readonly jobId: string };

export interface DeadManInput {
  readonly job: DeadManJob;
  /** Scheduled time of the job's latest final slot, if any. */
  readonly lastFinalAt: number | undefined;
  readonly now: number;
  /** k. @default DEFAULT_DEAD_MAN_FACTOR */
  readonly factor?: number;
}

/** @throws {InvalidJobSpecError} when the stored schedule does not parse. */
export function deadManVerdict(input: DeadManInput): DeadManVerdict {
  const { job, now } = input;
  if (!isActiveAt(job, now)) return { kind: 'inactive' };
  const reference = Math.max(input.lastFinalAt ?? Number.NEGATIVE_INFINITY, activeSince(job));
  const [first, second] = occurrences(job, reference + 1, reference + 1 + NEXT_OCCURRENCE_HORIZON_MS, 2);
  if (first === undefined) return { kind: 'done' };
  const factor = input.factor ?? DEFAULT_DEAD_MAN_FACTOR;
  const rare = second === undefined || second - first > RARE_INTERVAL_MS;
  const intervalMs = second === undefined ? first - reference : second - first;
  const dueBy = rare ? first : Math.max(first, reference + factor * intervalMs);
  const { jitterMs, startPrecision, timeoutMs } = job.policies;
  const deadline = dueBy + jitterOffsetMs(job.id, jitterMs) + surfaceSlackMs(startPrecision) + timeoutMs;
  if (now <= deadline) return { kind: 'ok', deadline };
  return { kind: 'stale', silentSince: reference, deadline, intervalMs, lastFinalAt: input.lastFinalAt, overdueAt: first };
}

/** Since when to look for a job's latest final slot: nothing older can move its verdict. */
export function deadManLookback(job: Pick<StoredJob, 'updatedAt' | 'pause'>): number {
  return activeSince(job);
}

/** The first window looked back over for probes; it grows 8-fold until it holds enough (a yearly job: 8 steps). */
const FIRST_PROBE_SPAN_MS = 60_000;
const PROBE_SPAN_GROWTH = 8;
const MAX_PROBE_SPAN_MS = 400 * 86_400_000;

/**
 * The instants whose final slot would show the job alive: its latest
 * `factor` occurrences that have started by `now` (second plus jitter
 * offset) since it became active, newest last (the newest may still run; the
 * one before it is final in a healthy job, and keeps its deadline ahead). The
 * watch reads these keys in batches and reads a job's history only when none
 * of them is final, or the latest final one leaves it stale.
 */
export function freshnessProbes(job: DeadManJob, now: number, factor = DEFAULT_DEAD_MAN_FACTOR): number[] {
  const wanted = Math.max(1, Math.ceil(factor));
  const lastStart = now - jitterOffsetMs(job.id, job.policies.jitterMs);
  const since = activeSince(job);
  for (let span = FIRST_PROBE_SPAN_MS; ; span *= PROBE_SPAN_GROWTH) {
    const from = Math.max(since, lastStart - span);
    const found = latestBetween(job, from, lastStart + 1, wanted);
    if (found.length >= wanted || from === since || span >= MAX_PROBE_SPAN_MS) return found;
  }
}

/** The last `count` occurrences in `[from, to)`, enumerated forward in pages (a burst of per-second occurrences in a long span). */
function latestBetween(job: DeadManJob, from: number, to: number, count: number): number[] {
  const page = Math.max(64, 4 * count);
  let found = occurrences(job, from, to, page);
  while (found.length === page) found = occurrences(job, found[page - count] as number, to, page);
  return found.slice(-count);
}

/**
 * Occurrences of the job's schedule, remembered: a watch judges thousands of
 * jobs, most sharing a few schedules and, between changes, the same instants
 * (every per-minute job's last minute), so most enumerations repeat. The set
 * is a function of its arguments only (schedule.ts), so a remembered answer is exact.
 */
function occurrences(job: DeadManJob, from: number, to: number, limit: number): number[] {
  const schedule: Schedule = scheduleOf(job);
  const key = `${schedule.cron}\u0000${schedule.timeZone}\u0000${schedule.dst?.gap}\u0000${schedule.dst?.repeat}\u0000${from}\u0000${to}\u0000${limit}`;
  const known = remembered.get(key);
  if (known !== undefined) return known;
  const found = occurrencesBetween(schedule, from, to, limit);
  if (remembered.size >= REMEMBERED) remembered.clear();
  remembered.set(key, found);
  return found;
}

const REMEMBERED = 20_000;
const remembered = new Map<string, number[]>();
