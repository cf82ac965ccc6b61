/**
 * Job CRUD in memory, as lib/aws/dynamo/job-repository.ts does it: the
 * decision is core/job-lifecycle.ts's, the write replaces the job record
 * (one step here, so no version race to retry), the new generation goes to
 * the wheel's inbox, then every pending slice of an older generation is
 * settled SKIPPED (`maySettle`, the condition of settle-pending-slices.ts),
 * and so is every due occurrence of the ended generation with no slice.
 */
import type { Clock } from '../core/clock.ts';
import {
  dueWithoutSlice,
  existingJob,
  inboxEntryOf,
  planDelete,
  planDeleteAfterOneTimeRun,
  planPause,
  planPut,
  planResume,
  withoutRecord,
  type LifecycleChange,
} from '../core/job-lifecycle.ts';
import { definitionOf, isTombstone, type JobRecord, type SkipReason, type StoredJob } from '../core/job-record.ts';
import { parseJobSpec } from '../core/job-spec.ts';
import type { PauseState } from '../core/operator.ts';
import { ledgerOfSlices, type LedgerRecord } from '../core/ledger.ts';
import type { ScanQueue } from '../core/ports.ts';
import { isSetAsideNow, type SetAsideJob } from '../core/set-aside.ts';
import { shardOf } from '../core/shard.ts';
import { SliceStatus, type Slice } from '../core/slice.ts';
import { maySettle } from '../core/slice-transitions.ts';
import { InMemorySliceStore } from './memory-slice-store.ts';
import { toSlice, type MemoryTables } from './memory-tables.ts';
import { InMemoryWheelStore } from './memory-wheel-store.ts';

export interface MemoryJobChange<T extends JobRecord = StoredJob> {
  readonly job: T;
  /** Slices of older generations settled SKIPPED: pending ones, and due occurrences that had none. */
  readonly skipped: number;
  /** A scan of the job's shard was requested (as JobRepository's `scanRequested`). */
  readonly scanRequested?: boolean;
}

export class InMemoryJobRepository {
  constructor(
    private readonly tables: MemoryTables,
    private readonly clock: Clock,
    private readonly knownHandlers?: readonly string[],
    /** Where a change asks for a scan of its shard (as JobRepository); without it, changes wait for the tick. */
    private readonly scans?: ScanQueue,
  ) {}

  /** @throws {InvalidJobSpecError} before anything is written. */
  async put(input: unknown): Promise<MemoryJobChange & { created: boolean }> {
    const spec = parseJobSpec(input, { knownHandlers: this.knownHandlers });
    const before = this.tables.jobs.get(spec.id);
    const created = before === undefined || isTombstone(before);
    const result = await this.change(spec.id, (previous, now) => planPut(spec, previous, now, this.tables.shardCount));
    return { ...result, created };
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const record = this.tables.jobs.get(id);
    return record === undefined || isTombstone(record) ? undefined : structuredClone(record);
  }

  async list(): Promise<StoredJob[]> {
    const jobs = [...this.tables.jobs.values()].filter((record): record is StoredJob => !isTombstone(record));
    return jobs.sort((a, b) => a.id.localeCompare(b.id)).map((job) => structuredClone(job));
  }

  /** The job's set-aside record when a scan set its current generation aside (as JobRepository.setAsideOf). */
  async setAsideOf(job: { readonly id: string; readonly generation: number }): Promise<SetAsideJob | undefined> {
    const record = await new InMemoryWheelStore(this.tables).setAsideJobs(shardOf(job.id, this.tables.shardCount));
    const found = record.find((candidate) => candidate.jobId === job.id);
    return isSetAsideNow(found, job) ? found : undefined;
  }

  /** @throws {JobNotFoundError} */
  /**
   * @param pause who paused it, why, and (optional) when it resumes by itself (as JobRepository.pause).
   * @throws {JobNotFoundError}
   */
  async pause(id: string, pause?: Omit<PauseState, 'at'>): Promise<MemoryJobChange> {
    return this.change(id, (previous, now) => planPause(existingJob(id, previous), now, pause && { ...pause, at: now }));
  }

  /** @throws {JobNotFoundError} */
  async resume(id: string): Promise<MemoryJobChange> {
    return this.change(id, (previous, now) => planResume(existingJob(id, previous), now));
  }

  /** @returns deleted: false when there was no such job. */
  async delete(id: string): Promise<{ deleted: boolean; skipped: number }> {
    const record = this.tables.jobs.get(id);
    if (record === undefined || isTombstone(record)) return { deleted: false, skipped: 0 };
    const { skipped } = await this.change(id, (previous, now) => planDelete(existingJob(id, previous), now));
    return { deleted: true, skipped };
  }

  /** A one-time job's run is over: delete it, unless it was redefined since (OneTimeJobs, core/job-lifecycle.ts). */
  async deleteAfterRun(id: string, generation: number): Promise<void> {
    await this.change(id, (previous, now) => planDeleteAfterOneTimeRun(previous, generation, now));
  }

  /** Slices of a job from `sinceMs` on, oldest first. */
  async slicesOf(jobId: string, sinceMs: number): Promise<Slice[]> {
    const rows = [...this.tables.slices.values()].filter((row) => row.jobId === jobId && row.scheduledAt >= sinceMs);
    return rows.sort((a, b) => a.scheduledAt - b.scheduledAt).map(toSlice);
  }

  /** Ledger records of a job from `sinceMs` on, oldest first: those its final slices carry. */
  async ledgerOf(jobId: string, sinceMs: number): Promise<LedgerRecord[]> {
    return ledgerOfSlices(await this.slicesOf(jobId, sinceMs));
  }

  /** Plan, write, put the new generation in the inbox, settle; a plan of undefined changes nothing but still settles (as the DynamoDB repository does). */
  private async change<T extends JobRecord>(
    id: string,
    plan: (previous: JobRecord | undefined, now: number) => LifecycleChange<T> | undefined,
  ): Promise<MemoryJobChange<T>> {
    const now = this.clock.now();
    const previous = this.tables.jobs.get(id);
    const change = plan(previous, now);
    if (change === undefined) {
      const job = previous as T;
      const skipped = this.settle(job, now, settleReasonOf(job));
      return { job: structuredClone(job), skipped, scanRequested: await this.requestScan(job) };
    }
    this.tables.jobs.set(id, structuredClone(change.next));
    const entry = inboxEntryOf(change.next);
    if (entry && !isTombstone(change.next)) await new InMemoryWheelStore(this.tables).putInbox(change.next.shard, entry);
    const scanRequested = await this.requestScan(change.next);
    // Only a change that ends the generation settles its due occurrences (as JobRepository): resuming a timed pause after its end keeps it.
    const ended = previous !== undefined && previous.generation !== change.next.generation;
    const skipped = this.settle(change.next, now, change.settle) + (ended ? await this.settleDue(previous, now, change.settle) : 0);
    return { job: structuredClone(change.next), skipped, scanRequested };
  }

  /** A scan of the shard when the job waits in its inbox (as JobRepository); best effort: the tick takes it up anyway. */
  private async requestScan(record: JobRecord | undefined): Promise<boolean> {
    if (this.scans === undefined || record === undefined || inboxEntryOf(record) === undefined) return false;
    try {
      await this.scans.send([{ shard: shardOf(record.id, this.tables.shardCount) }]);
      return true;
    } catch {
      return false;
    }
  }

  /** The ended generation's due occurrences with no slice: SKIPPED with the change's reason (core/job-lifecycle.ts `dueWithoutSlice`). */
  private async settleDue(previous: JobRecord | undefined, now: number, reason: SkipReason): Promise<number> {
    const due = dueWithoutSlice(previous, now);
    if (due === undefined || previous === undefined || isTombstone(previous)) return 0;
    const store = new InMemorySliceStore(this.tables);
    const missing = withoutRecord(due.occurrences, previous.generation, await store.between(previous.id, due.from, due.to));
    return store.settleAbsent(previous.id, definitionOf(previous), missing, reason, now);
  }

  private settle(job: JobRecord, now: number, reason: SkipReason): number {
    if (job.generation <= 1) return 0;
    let skipped = 0;
    for (const row of this.tables.slices.values()) {
      if (row.jobId !== job.id || !maySettle(row, job.generation)) continue;
      row.status = SliceStatus.Skipped;
      row.skipReason = reason;
      row.finishedAt = now;
      row.expiresAt = this.tables.expiresAtSeconds(now);
      delete row.sweepShard;
      delete row.sweepAt;
      skipped++;
    }
    return skipped;
  }

}

function settleReasonOf(job: JobRecord): SkipReason {
  if (isTombstone(job)) return 'deleted';
  return job.enabled ? 'superseded' : 'paused';
}
