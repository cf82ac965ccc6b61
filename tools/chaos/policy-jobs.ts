/**
 * The drill's schedule-policy jobs, beside the random ones of chaos-jobs.ts:
 * - three `rate(30 seconds)` jobs back from a simulated scanner outage
 *   (their `nextFireAt` moved {@link OUTAGE_MS} into the past before the first
 *   tick, as a 2.5-minute outage leaves it), one per misfire policy: `all`
 *   runs every occurrence of the outage, `latest` the latest due one only,
 *   `none` none of those already due, each skipped one recorded in one
 *   SKIPPED `misfire` range;
 * - two one-time `at(...)` jobs due inside the window, one that completes
 *   (kept, never fires again) and one that deletes itself after its run;
 * - three jobs every 5 s on the slow handler (2.5 to 6 s with the
 *   slowHandler fault), so runs overlap, one per overlap policy: `skip`,
 *   `bufferOne`, `replace` (bufferAll's queue would outgrow a short drill).
 * None of them is touched by the lifecycle fault, so what each should end
 * with follows from its policy alone (policy-checks.ts).
 */
import type { JobSpecInput, MisfirePolicy, OverlapPolicy } from '../../lib/core/job-spec.ts';
import { wallOf } from './expected.ts';

/** How far into the past the outage jobs' `nextFireAt` is moved: 5 occurrences, all inside the catch-up window. */
export const OUTAGE_MS = 150_000;
/** Every 30 s: enough occurrences in the outage for each misfire policy to show, at a tenth of the drill's load. */
export const OUTAGE_SCHEDULE = 'rate(30 seconds)';
export const MISFIRE_JOBS: readonly { readonly id: string; readonly misfire: MisfirePolicy }[] = [
  { id: 'policy-misfire-all', misfire: 'all' },
  { id: 'policy-misfire-latest', misfire: 'latest' },
  { id: 'policy-misfire-none', misfire: 'none' },
];
export const OVERLAP_JOBS: readonly { readonly id: string; readonly overlap: OverlapPolicy }[] = [
  { id: 'policy-overlap-skip', overlap: 'skip' },
  { id: 'policy-overlap-bufferone', overlap: 'bufferOne' },
  { id: 'policy-overlap-replace', overlap: 'replace' },
];
/** Every 5 s: more than the promised clock skew between two claims (overlap-policy.ts), less than a slow run. */
const OVERLAP_SCHEDULE = '*/5 * * * * *';
export const ONE_TIME_JOBS = { keep: 'policy-once-complete', delete: 'policy-once-delete' } as const;
/** The one-time jobs fire this long after they are stored: inside any drill of 30 s or more. */
const ONE_TIME_AFTER_MS = 25_000;
const DRILL_POLICIES = { maxAttempts: 10, timeoutMs: 20_000, backoffBaseMs: 200, backoffMaxMs: 1000, catchUpWindowMs: 3_600_000 };

/** The policy jobs, their one-time ones due `ONE_TIME_AFTER_MS` after `now`. */
export function policyJobs(now: number): (JobSpecInput & { id: string })[] {
  const onceAt = Math.ceil((now + ONE_TIME_AFTER_MS) / 1000) * 1000;
  const misfire = MISFIRE_JOBS.map(({ id, misfire: policy }) => ({
    id,
    schedule: OUTAGE_SCHEDULE,
    timeZone: 'UTC',
    handler: 'chaos-fast',
    payload: { rev: 0 },
    policies: { ...DRILL_POLICIES, misfire: policy },
  }));
  const oneTime = (id: string, timeZone: string, afterOneTime: 'complete' | 'delete'): JobSpecInput & { id: string } => ({
    id,
    schedule: `at(${localTime(onceAt, timeZone)})`,
    timeZone,
    handler: 'chaos-fast',
    payload: { rev: 0 },
    policies: { ...DRILL_POLICIES, afterOneTime },
  });
  const overlap = OVERLAP_JOBS.map(({ id, overlap: policy }) => ({
    id,
    schedule: OVERLAP_SCHEDULE,
    timeZone: 'UTC',
    handler: 'chaos-slow',
    payload: { rev: 0 },
    policies: { ...DRILL_POLICIES, overlap: policy },
  }));
  return [
    ...misfire,
    ...overlap,
    oneTime(ONE_TIME_JOBS.keep, 'Asia/Kolkata', 'complete'),
    oneTime(ONE_TIME_JOBS.delete, 'Europe/Berlin', 'delete'),
  ];
}

/** `instant` as the local time `at(...)` takes, YYYY-MM-DDTHH:MM:SS in `timeZone`. */
function localTime(instant: number, timeZone: string): string {
  return new Date(wallOf(instant, timeZone)).toISOString().slice(0, 19);
}
