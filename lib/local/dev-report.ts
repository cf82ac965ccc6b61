/**
 * What `cronfence dev` shows: one line per execution outcome as it happens
 * (or one JSON object per lifecycle event), and the run's summary at the end.
 */
import { OUTBOX_SHARDS, type OutboxStore } from '../core/chunks.ts';
import { executionKey } from '../core/execution-key.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { distribution } from '../core/stats.ts';
import { formatOutcome, formatStale, isOutcome, jobColumnWidth, ms, outcomeHeader, table } from './format.ts';
import type { Runtime } from '../lambda/wiring.ts';

export interface DevJobSummary {
  readonly jobId: string;
  readonly committed: number;
  readonly ledgerRecords: number;
  readonly duplicateKeys: number;
  readonly workers: number;
}

export interface DevSummary {
  readonly events: Record<string, number>;
  readonly startLag: ReturnType<typeof distribution>;
  readonly jobs: DevJobSummary[];
  readonly startedAt: number;
  readonly endedAt: number;
  /** Why the jobs table could not be summarised, when it could not. */
  readonly jobsError?: string;
  /** Outbound requests of chunked jobs not delivered yet (PENDING); `atLeast` when a shard held PENDING_COUNT_LIMIT or more. */
  readonly outboxPending?: { readonly count: number; readonly atLeast: boolean };
  /** Why the outbox could not be read, when it could not. */
  readonly outboxError?: string;
}

/** The summary counts pending outbox requests up to this many per outbox shard (each a Query of the outbox index). */
export const PENDING_COUNT_LIMIT = 10_000;

export class DevReport {
  private readonly counts: Record<string, number> = {};
  private readonly lags = new Map<string, number>();
  private readonly committedBy = new Map<string, Set<string>>();
  private began = Date.now();
  private jobWidth = jobColumnWidth([]);

  constructor(private readonly options: { readonly json: boolean; readonly write: (line: string) => void }) {}

  get startedAt(): number {
    return this.began;
  }

  /** The run proper starts (after the emulator's start-up, which may take a minute the first time). */
  begin(): void {
    this.began = Date.now();
  }

  /** The jobs are registered: the outcome lines' header, its job column as wide as the longest id. */
  outcomesFollow(jobIds: readonly string[]): void {
    this.jobWidth = jobColumnWidth(jobIds);
    this.say(outcomeHeader(this.jobWidth));
  }

  /** Progress text (nothing under --json, whose stdout is events only). */
  say(line: string): void {
    if (!this.options.json) this.options.write(line);
  }

  onEvent(event: LifecycleEvent): void {
    this.counts[event.type] = (this.counts[event.type] ?? 0) + 1;
    if (this.options.json) return this.options.write(JSON.stringify(event));
    if (event.type === 'started' && event.startLagMs !== undefined) this.lags.set(event.executionKey, event.startLagMs);
    if (event.type === 'committed') {
      const workers = this.committedBy.get(event.jobId) ?? new Set<string>();
      this.committedBy.set(event.jobId, workers.add(event.worker));
    }
    if (isOutcome(event)) this.say(formatOutcome(event, this.lags.get(event.executionKey), this.jobWidth));
    if (event.type === 'stale') this.say(formatStale(event));
  }

  /** Reads the ledger of every job; a store that is gone is reported in the summary, not thrown. */
  async summarize(runtime: Runtime): Promise<DevSummary> {
    let jobs: DevJobSummary[] = [];
    let jobsError: string | undefined;
    try {
      jobs = await this.summarizeJobs(runtime);
    } catch (error) {
      jobsError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    let outboxPending: DevSummary['outboxPending'];
    let outboxError: string | undefined;
    try {
      outboxPending = await countPending(runtime.outbox);
    } catch (error) {
      outboxError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    const summary: DevSummary = {
      events: this.counts,
      startLag: distribution([...this.lags.values()]),
      jobs,
      startedAt: this.startedAt,
      endedAt: Date.now(),
      ...(jobsError !== undefined && { jobsError }),
      ...(outboxPending !== undefined && { outboxPending }),
      ...(outboxError !== undefined && { outboxError }),
    };
    if (!this.options.json) printSummary(summary, this.options.write);
    return summary;
  }

  private async summarizeJobs(runtime: Runtime): Promise<DevJobSummary[]> {
    const repository = runtime.jobs();
    const summaries: DevJobSummary[] = [];
    for (const job of await repository.list()) {
      const ledger = await repository.ledgerOf(job.id, this.startedAt - 60_000);
      const keys = new Set(ledger.map((record) => executionKey(record.jobId, record.scheduledAt)));
      summaries.push({
        jobId: job.id,
        committed: ledger.filter((record) => record.outcome === 'SUCCEEDED').length,
        ledgerRecords: ledger.length,
        duplicateKeys: ledger.length - keys.size,
        workers: this.committedBy.get(job.id)?.size ?? 0,
      });
    }
    return summaries;
  }
}

function printSummary(summary: DevSummary, write: (line: string) => void): void {
  write('');
  write(`ran ${Math.round((summary.endedAt - summary.startedAt) / 1000)} s; events: ${JSON.stringify(summary.events)}`);
  write(
    `start lag: p50 ${ms(summary.startLag.p50)}, p99 ${ms(summary.startLag.p99)}, max ${ms(summary.startLag.max)} over ${summary.startLag.count} starts`,
  );
  if (summary.jobsError) write(`jobs and ledger not read: ${summary.jobsError}`);
  write(
    table([
      ['job', 'committed', 'ledger records', 'duplicate keys', 'workers used'],
      ...summary.jobs.map((job) => [job.jobId, job.committed, job.ledgerRecords, job.duplicateKeys, job.workers]),
    ]),
  );
  if (summary.outboxError) write(`outbox not read: ${summary.outboxError}`);
  if (summary.outboxPending !== undefined) write(outboxLine(summary.outboxPending));
}

/** Every PENDING outbox request (due or not), over the outbox shards; a shard at the limit makes it a lower bound. */
async function countPending(outbox: Pick<OutboxStore, 'findDue'>): Promise<{ count: number; atLeast: boolean }> {
  let count = 0;
  let atLeast = false;
  for (let shard = 0; shard < OUTBOX_SHARDS; shard++) {
    const found = (await outbox.findDue(shard, Number.MAX_SAFE_INTEGER, PENDING_COUNT_LIMIT)).length;
    count += found;
    atLeast ||= found >= PENDING_COUNT_LIMIT;
  }
  return { count, atLeast };
}

function outboxLine(pending: { count: number; atLeast: boolean }): string {
  if (pending.count === 0) return 'outbox: no requests pending';
  return `outbox: ${pending.atLeast ? 'at least ' : ''}${pending.count} requests still pending, not delivered yet (committed; the next dispatcher delivers them: the next \`cronfence dev\`, or your stack's outbox function)`;
}
