/** How `cronfence jobs list|get` show a stored job to a person: ISO times, durations, what state it is in. */
import { NEVER } from '../core/advance-plan.ts';
import { isoSecond } from '../core/execution-key.ts';
import { isActiveAt, nextOccurrenceOf } from '../core/job-lifecycle.ts';
import type { OperatorNote } from '../core/operator.ts';
import type { StoredJob } from '../core/job-record.ts';
import type { SetAsideJob } from '../core/set-aside.ts';
import { DEFAULT_START_PRECISION } from '../core/start-precision.ts';
import { table } from '../local/format.ts';

/** enabled; paused (by whom, until when); or running again after a timed pause's end. */
export function stateOf(job: StoredJob, now = Date.now()): string {
  if (job.enabled) return 'enabled';
  if (isActiveAt(job, now)) return `enabled (pause ended ${isoSecond(job.pause?.until ?? now)})`;
  const by = job.pause ? ` by ${job.pause.actor}` : '';
  return job.pause?.until !== undefined ? `paused${by} until ${isoSecond(job.pause.until)}` : `paused${by}`;
}

/** A job that never fires again (a one-time job after its run, a schedule with no future occurrence) is complete. */
export function nextLabel(nextFireAt: number): string {
  return nextFireAt >= NEVER ? 'never (complete)' : isoSecond(nextFireAt);
}

/**
 * One row of `jobs list`. A stored row that cannot be read (a schedule or zone
 * that no longer parses, a field missing) is listed as unreadable with the
 * reason, never an error for the whole list.
 */
export function listRow(job: StoredJob, now = Date.now()): (string | number)[] {
  try {
    return [
      job.id,
      job.schedule,
      job.timeZone,
      job.handler,
      stateOf(job, now),
      nextLabel(nextOccurrenceOf(job, now)),
      job.version,
      job.origin ?? '-',
      job.group ?? '-',
    ];
  } catch (error) {
    return [
      job.id,
      String(job.schedule),
      String(job.timeZone),
      String(job.handler),
      `unreadable: ${reasonOf(error)}`,
      '-',
      String(job.version),
      job.origin ?? '-',
      job.group ?? '-',
    ];
  }
}

/** The next fire time, or why a stored row that cannot be planned has none. */
function nextFireLabel(job: StoredJob, now: number): string {
  try {
    return nextLabel(nextOccurrenceOf(job, now));
  } catch (error) {
    return `unreadable: ${reasonOf(error)}`;
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `jobs get`: one labelled line per field, times in ISO (UTC), durations with their unit; a job a scan set aside says why. */
export function jobDetail(job: StoredJob, setAside?: SetAsideJob, now = Date.now()): string {
  const { policies } = job;
  const rows: [string, string][] = [
    ['id', job.id],
    ['schedule', `${job.schedule} in ${job.timeZone} (DST gap ${job.dst?.gap}, repeat ${job.dst?.repeat})`],
    ['handler', job.handler],
    ['state', stateOf(job, now)],
    ['next fire (UTC)', nextFireLabel(job, now)],
    ['payload', job.payload === undefined ? '-' : JSON.stringify(job.payload)],
    ['lease', `${duration(policies.leaseMs)}, renewed every ${duration(policies.heartbeatMs)}`],
    ['attempts', `${policies.maxAttempts}, retry backoff ${duration(policies.backoffBaseMs)} up to ${duration(policies.backoffMaxMs)}`],
    ['timeout', duration(policies.timeoutMs)],
    ['catch-up window', duration(policies.catchUpWindowMs)],
    ['misfire', policies.misfire ?? 'all'],
    ['overlap', policies.overlap ?? 'allow'],
    ['jitter', policies.jitterMs ? `up to ${duration(policies.jitterMs)}` : 'none'],
    ['start precision', policies.startPrecision ?? DEFAULT_START_PRECISION],
  ];
  if (setAside)
    rows.push(['set aside', `since ${isoSecond(setAside.at)} by ${setAside.by} (generation ${setAside.generation}): ${setAside.reason}`]);
  if (policies.afterOneTime !== undefined) rows.push(['after its one run', policies.afterOneTime]);
  if (job.pause) rows.push(['paused', `${note(job.pause)}${job.pause.until !== undefined ? `, until ${isoSecond(job.pause.until)}` : ''}`]);
  if (job.resumed) rows.push(['last resumed', note(job.resumed)]);
  rows.push(
    ['group', job.group ?? '-'],
    ['origin', job.origin ?? '-'],
    ['shard', String(job.shard)],
    ['version', `${job.version} (generation ${job.generation})`],
    ['created', isoSecond(job.createdAt)],
    ['updated', isoSecond(job.updatedAt)],
  );
  return table(rows);
}

function note(what: OperatorNote): string {
  return `${isoSecond(what.at)} by ${what.actor}${what.reason ? `: ${what.reason}` : ''}`;
}

const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'm'],
  [1000, 's'],
];

/** `600000` → `10m`; a value no unit divides stays in ms. */
export function duration(ms: number): string {
  if (ms === 0) return '0s';
  for (const [size, unit] of UNITS) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms} ms`;
}
