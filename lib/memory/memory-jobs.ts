/**
 * Job CRUD in memory, as lib/aws/dynamo/job-repository.ts does it: the
 * decision is core/job-lifecycle.ts's, the write replaces the job record
 * (one step here, so no version race to retry), then every pending slice of
 * an older generation is settled SKIPPED (`maySettle`, the condition of
 * settle-pending-slices.ts).
 */
import type { Clock } from '../core/clock.ts';
import {
  existingJob,
  isTombstone,
  planDelete,
  planDeleteAfterOneTimeRun,
  planPause,
  planCatchUpBeforeChange,
  planPut,
  planResume,
  type JobRecord,
  type LifecycleChange,
  type SkipReason,
} from '../core/job-lifecycle.ts';
import { parseJobSpec } from '../core/job-spec.ts';
import { ledgerOfSlices, type LedgerRecord } from '../core/ledger.ts';
import type { StoredJob } from '../core/ports.ts';
import { sweepAtFor, SliceStatus, type Slice } from '../core/slice.ts';
import { maySettle } from '../core/slice-transitions.ts';
import { InMemoryScheduleStore } from './memory-schedule-store.ts';
import { toSlice, type MemoryTables } from './memory-tables.ts';

export interface MemoryJobChange<T extends JobRecord = StoredJob> {
  readonly job: T;
  /** Pending slices of older generations settled SKIPPED. */
  readonly skipped: number;
}

export class InMemoryJobRepository {
  constructor(
    private readonly tables: MemoryTables,
    private readonly clock: Clock,
    private readonly knownHandlers?: readonly string[],
  ) {
    this.schedules = new InMemoryScheduleStore(tables);
  }

  private readonly schedules: InMemoryScheduleStore;

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

  /** @throws {JobNotFoundError} */
  async pause(id: string): Promise<MemoryJobChange> {
    return this.change(id, (previous, now) => planPause(existingJob(id, previous), now));
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

  /**
   * Plan, write, settle; a plan of undefined changes nothing but still settles (as the DynamoDB repository does).
   * A change that ends a definition first advances the job over its due, unsliced occurrences (the same catch-up).
   */
  private async change<T extends JobRecord>(
    id: string,
    plan: (previous: JobRecord | undefined, now: number) => LifecycleChange<T> | undefined,
  ): Promise<MemoryJobChange<T>> {
    const now = this.clock.now();
    let change = plan(this.tables.jobs.get(id), now);
    if (change !== undefined && (await this.catchUp(id, now))) change = plan(this.tables.jobs.get(id), now);
    if (change === undefined) {
      const job = this.tables.jobs.get(id) as T;
      return { job: structuredClone(job), skipped: this.settle(job, now, settleReasonOf(job)) };
    }
    this.tables.jobs.set(id, structuredClone(change.next));
    return { job: structuredClone(change.next), skipped: this.settle(change.next, now, change.settle) };
  }

  /** @returns whether the job was advanced. */
  private async catchUp(id: string, now: number): Promise<boolean> {
    let advanced = false;
    for (let plan = planCatchUpBeforeChange(this.tables.jobs.get(id), now); plan !== undefined; plan = planCatchUpBeforeChange(this.tables.jobs.get(id), now)) {
      const job = this.tables.jobs.get(id) as StoredJob;
      const slices = plan.occurrences.map((scheduledAt) => ({
        jobId: id,
        scheduledAt,
        sweepAt: sweepAtFor(SliceStatus.Enqueued, { scheduledAt, now, graceMs: this.tables.sweepGraceMs }),
      }));
      await this.schedules.advance(job, slices, plan.nextFireAt, now, plan.missed, plan.skipped);
      advanced = true;
    }
    return advanced;
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
