/**
 * The JobStore port in memory, with lib/aws/dynamo/job-store.ts's rules: a
 * change's write (the job on the version read, its inbox entry never over a
 * newer generation's, its settle record) is one map update, all or nothing;
 * settling a pending slice follows `maySettle`, the condition of
 * settle-pending-slices.ts. The use case is engine/job-repository.ts.
 */
import type { DueSettle, JobWrite } from '../core/job-change.ts';
import type { JobRecord, SkipReason } from '../core/job-record.ts';
import type { JobStore } from '../core/ports.ts';
import { SliceStatus, type Slice } from '../core/slice.ts';
import { maySettle } from '../core/slice-transitions.ts';
import { toSlice, type MemoryTables } from './memory-tables.ts';

export class InMemoryJobStore implements JobStore {
  constructor(private readonly tables: MemoryTables) {}

  async records(): Promise<JobRecord[]> {
    return [...this.tables.jobs.values()].map((record) => structuredClone(record));
  }

  async slicesOf(jobId: string, fromMs: number, toMs = Infinity): Promise<Slice[]> {
    const rows = [...this.tables.slices.values()].filter(
      (row) => row.jobId === jobId && row.scheduledAt >= fromMs && row.scheduledAt < toMs,
    );
    return rows.sort((a, b) => a.scheduledAt - b.scheduledAt).map(toSlice);
  }

  async pendingSettles(shard: number, jobId: string): Promise<DueSettle[]> {
    const settles = [...this.tables.wheelShard(shard).settles.values()].filter((settle) => settle.jobId === jobId);
    return settles.sort((a, b) => a.generation - b.generation).map((settle) => structuredClone(settle));
  }

  async writeChange(write: JobWrite): Promise<boolean> {
    const stored = this.tables.jobs.get(write.next.id);
    if (write.previous === undefined ? stored !== undefined : stored?.version !== write.previous.version) return false;
    const partition = this.tables.wheelShard(write.shard);
    const inboxed = write.inbox && partition.inbox.get(write.inbox.jobId);
    if (write.inbox && inboxed !== undefined && inboxed.generation > write.inbox.generation) return false;
    this.tables.jobs.set(write.next.id, structuredClone(write.next));
    if (write.inbox) partition.inbox.set(write.inbox.jobId, { ...write.inbox });
    if (write.settle) partition.settles.set(settleKey(write.settle), structuredClone(write.settle));
    return true;
  }

  async clearSettle(settle: DueSettle): Promise<void> {
    this.tables.wheelShard(settle.shard).settles.delete(settleKey(settle));
  }

  async settlePending(request: { jobId: string; generation: number; reason: SkipReason; now: number }): Promise<number> {
    let skipped = 0;
    for (const row of this.tables.slices.values()) {
      if (row.jobId !== request.jobId || !maySettle(row, request.generation)) continue;
      row.status = SliceStatus.Skipped;
      row.skipReason = request.reason;
      row.finishedAt = request.now;
      row.expiresAt = this.tables.expiresAtSeconds(request.now);
      delete row.sweepShard;
      delete row.sweepAt;
      skipped++;
    }
    return skipped;
  }
}

function settleKey(settle: Pick<DueSettle, 'jobId' | 'generation'>): string {
  return `${settle.jobId}#${settle.generation}`;
}
