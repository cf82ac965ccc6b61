/**
 * The ScheduleStore port in memory: the "due" index read and the advance
 * of lib/aws/dynamo/advance-job.ts, with its conditions taken from
 * slice-transitions.ts (mayAdvanceJob for the job, mayCreateSlice for each
 * slice). DynamoDB's advance retries once without the slices that already
 * exist; one in-memory call sees them all at once, so it creates the rest
 * in the same step, which is where that retry ends up.
 */
import type { MissedRange, SkippedRange } from '../core/advance-plan.ts';
import { inDueIndex, isTombstone } from '../core/job-lifecycle.ts';
import type { AdvanceOutcome, NewSlice, ScheduleStore, StoredJob } from '../core/ports.ts';
import { SliceStatus, type SliceKey } from '../core/slice.ts';
import { isCreatedBy, MAX_SLICES_PER_ADVANCE, mayAdvanceJob, mayCreateSlice } from '../core/slice-transitions.ts';
import { sliceId, type MemoryTables, type SliceRow } from './memory-tables.ts';

export class InMemoryScheduleStore implements ScheduleStore {
  constructor(private readonly tables: MemoryTables) {}

  /** Enabled jobs of `shard` with `nextFireAt < untilMs`, oldest first (the due index holds only enabled jobs). */
  async queryDue(shard: number, untilMs: number, limit: number): Promise<StoredJob[]> {
    const due: StoredJob[] = [];
    for (const record of this.tables.jobs.values()) {
      if (isTombstone(record) || !inDueIndex(record) || record.shard !== shard || record.nextFireAt >= untilMs) continue;
      due.push(structuredClone(record));
    }
    return due.sort((a, b) => a.nextFireAt - b.nextFireAt).slice(0, limit);
  }

  async advance(job: StoredJob, slices: readonly NewSlice[], nextFireAt: number, now: number, missed?: MissedRange, skipped?: SkippedRange): Promise<AdvanceOutcome> {
    if (slices.length > MAX_SLICES_PER_ADVANCE) throw new RangeError(`at most ${MAX_SLICES_PER_ADVANCE} slices per advance`);
    const record = this.tables.jobs.get(job.id);
    const stored = isTombstone(record) ? undefined : record;
    if (stored === undefined || !mayAdvanceJob(stored, job.version)) return { kind: 'conflict', alreadyCreated: this.createdByThisScan(slices) };
    const created: SliceKey[] = [];
    for (const slice of slices) {
      const id = sliceId(slice);
      const previous = this.tables.slices.get(id);
      if (!mayCreateSlice(previous, job.generation)) continue;
      this.tables.slices.set(id, this.newRow(job, slice, now, previous));
      created.push({ jobId: slice.jobId, scheduledAt: slice.scheduledAt });
    }
    if (missed) {
      const id = sliceId({ jobId: job.id, scheduledAt: missed.from });
      const previous = this.tables.slices.get(id);
      if (mayCreateSlice(previous, job.generation)) this.tables.slices.set(id, this.rangeRow(job, missed, now, previous));
    }
    if (skipped) {
      const id = sliceId({ jobId: job.id, scheduledAt: skipped.from });
      const previous = this.tables.slices.get(id);
      if (mayCreateSlice(previous, job.generation)) this.tables.slices.set(id, this.rangeRow(job, skipped, now, previous));
    }
    this.tables.jobs.set(job.id, { ...stored, nextFireAt, version: stored.version + 1 });
    return { kind: 'advanced', created };
  }

  /** The slices of `slices` that exist unclaimed with the scan id they are to be created with (see AdvanceOutcome). */
  private createdByThisScan(slices: readonly NewSlice[]): SliceKey[] {
    return slices.flatMap((slice) => {
      const row = this.tables.slices.get(sliceId(slice));
      return isCreatedBy(row, slice.scanId) ? [{ jobId: slice.jobId, scheduledAt: slice.scheduledAt }] : [];
    });
  }

  /**
   * ENQUEUED for this generation with the job's handler, policies and payload
   * copied on; the fence is kept (it only ever grows), the last run's lease,
   * owner, error and skip reason are gone. (Like the DynamoDB write, it keeps
   * an older claim's claimToken: every claim brings a fresh one.)
   */
  private newRow(job: StoredJob, slice: NewSlice, now: number, previous: SliceRow | undefined): SliceRow {
    return {
      jobId: slice.jobId,
      scheduledAt: slice.scheduledAt,
      status: SliceStatus.Enqueued,
      fence: previous?.fence ?? 0,
      attempts: 0,
      generation: job.generation,
      handler: job.handler,
      policies: structuredClone(job.policies),
      payload: job.payload === undefined ? undefined : structuredClone(job.payload),
      shard: job.shard,
      leaseMs: job.policies.leaseMs,
      sweepShard: job.shard,
      sweepAt: slice.sweepAt,
      scanId: slice.scanId,
      createdAt: now,
      claimToken: previous?.claimToken,
    };
  }

  /** The MISSED (or misfire SKIPPED) record of a range, as lib/aws/dynamo/advance-job.ts writes it: final, so out of the sweep index. */
  private rangeRow(job: StoredJob, missed: MissedRange | SkippedRange, now: number, previous: SliceRow | undefined): SliceRow {
    const { payload: _payload, sweepShard: _sweepShard, sweepAt: _sweepAt, scanId: _scanId, ...row } = this.newRow(
      job,
      { jobId: job.id, scheduledAt: missed.from, sweepAt: 0 },
      now,
      previous,
    );
    const status = 'reason' in missed ? { status: SliceStatus.Skipped, skipReason: missed.reason } : { status: SliceStatus.Missed };
    return { ...row, ...status, missedUntil: missed.to, missedCount: missed.count, finishedAt: now };
  }
}
