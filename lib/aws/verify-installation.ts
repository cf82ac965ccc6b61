/**
 * `cronfence verify` without the command line: read an installation's
 * history (dynamo/audit-reader.ts) and audit it (core/audit.ts). The CLI,
 * the integration test and the chaos drill call this same function.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { auditHistory, type AuditReport } from '../core/audit.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { CronfenceConfig } from './config.ts';
import { readAuditHistory, type AuditReadProgress, type EffectSource } from './dynamo/audit-reader.ts';
import { judgeJobs, type StaleJob, type UnjudgedJob } from './dead-man-watch.ts';
import { DEFAULT_DEAD_MAN_FACTOR } from '../core/dead-man.ts';
import type { SetAsideJob } from '../core/set-aside.ts';
import { DynamoWheelStore } from './dynamo/wheel-store.ts';

export interface VerifySource {
  readonly dynamo: DynamoDBClient;
  readonly config: Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'sliceRetentionMs'> &
    Partial<Pick<CronfenceConfig, 'deadManFactor' | 'chunksTable' | 'wheelTable' | 'shardCount'>>;
  /** @default the system clock */
  readonly clock?: Clock;
}

export interface VerifyRequest {
  /** Epoch ms. Moved up to the slice retention when older (older final slices have expired). */
  readonly since: number;
  /** Epoch ms, exclusive. @default now */
  readonly until?: number;
  readonly jobId?: string;
  /** Business tables to check commits against (see EffectSource). */
  readonly effects?: readonly EffectSource[];
  /** @default AUDIT_DEFAULTS.graceMs */
  readonly graceMs?: number;
  /** @default AUDIT_DEFAULTS.lateThresholdMs */
  readonly lateThresholdMs?: number;
  /** @default AUDIT_DEFAULTS.occurrenceCap */
  readonly occurrenceCap?: number;
  readonly onProgress?: (progress: AuditReadProgress) => void;
}

/**
 * The audit, with the dead-man's switch over the same jobs (its own read of each job's latest final slot, whatever the
 * window), judged at the window's end: its stale jobs are violations.
 */
export type VerifyReport = AuditReport & {
  readonly deadMan: {
    readonly factor: number;
    readonly checked: number;
    readonly at: string;
    readonly stale: StaleJob[];
    readonly unjudged: UnjudgedJob[];
  };
};

export async function verifyInstallation(source: VerifySource, request: VerifyRequest): Promise<VerifyReport> {
  const clock = source.clock ?? systemClock;
  const now = clock.now();
  const until = request.until ?? now;
  if (!(until > request.since))
    throw new RangeError(`until (${new Date(until).toISOString()}) must be after since (${new Date(request.since).toISOString()})`);
  // SKIPPED and MISSED slices expire after the retention (DynamoDB TTL); SUCCEEDED and DEAD ones (the ledger) do
  // not. Checking older history would report every expired record of an occurrence not run as missing.
  const retainedFrom = now - source.config.sliceRetentionMs;
  const since = Math.max(request.since, retainedFrom);
  if (since >= until)
    throw new RangeError(
      `the whole window ends before ${new Date(since).toISOString()}: older SKIPPED and MISSED slices have expired (slice retention ${span(source.config.sliceRetentionMs)})`,
    );
  const history = await readAuditHistory(source.dynamo, source.config, {
    since,
    until,
    jobId: request.jobId,
    effects: request.effects,
    onProgress: request.onProgress,
  });
  const notes: string[] = [];
  if (since !== request.since) {
    notes.push(
      `since moved from ${new Date(request.since).toISOString()} to ${new Date(since).toISOString()}: SKIPPED and MISSED slices expire after the slice retention (${span(source.config.sliceRetentionMs)})`,
    );
  }
  if (history.unstampedEffects > 0) {
    notes.push(
      `${history.unstampedEffects} items of ${request.effects?.map((effect) => effect.table).join(', ')} carry no execution key or numeric fence: not checked`,
    );
  }
  const factor = source.config.deadManFactor ?? DEFAULT_DEAD_MAN_FACTOR;
  // Judged at the window's end: a drill's window checked afterwards is not stale for the silence since it ended.
  const judgedAt = Math.min(now, until);
  const deadMan = await judgeJobs(
    source.dynamo,
    { slicesTable: source.config.slicesTable, deadManFactor: factor },
    history.jobs,
    judgedAt,
    clock,
  );
  const report = auditHistory({
    ...history,
    now,
    since,
    until,
    graceMs: request.graceMs,
    lateThresholdMs: request.lateThresholdMs,
    occurrenceCap: request.occurrenceCap,
    stale: deadMan.stale,
    setAside: await readSetAside(source, clock, request.jobId),
  });
  return {
    ...report,
    ...(notes.length > 0 && { notes: [...notes, ...report.notes] }),
    deadMan: { factor, checked: deadMan.checked, at: new Date(judgedAt).toISOString(), stale: deadMan.stale, unjudged: deadMan.unjudged },
  };
}

/** The scans' set-aside records (one Query per shard), of the one job asked about if any; none when the wheel is not configured. */
async function readSetAside(source: VerifySource, clock: Clock, jobId: string | undefined): Promise<SetAsideJob[]> {
  const { wheelTable, shardCount } = source.config;
  if (wheelTable === undefined || shardCount === undefined) return [];
  const wheel = new DynamoWheelStore(source.dynamo, { wheelTable }, clock, Math.random);
  const shards = Array.from({ length: shardCount }, (_, shard) => shard);
  const records = (await Promise.all(shards.map((shard) => wheel.setAsideJobs(shard)))).flat();
  return records.filter((record) => jobId === undefined || record.jobId === jobId);
}

function span(ms: number): string {
  if (ms >= 86_400_000) return `${Math.round(ms / 86_400_000)} days`;
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 60_000)} min`;
}
