/**
 * The OverlapStore port in memory, with lib/aws/dynamo/overlap-ops.ts's
 * conditions: each write needs the slice held on the given fence
 * (`holdsLease`, core/slice-transitions.ts).
 */
import { LeaseLostError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import type { OverlapStore } from '../core/ports.ts';
import { SliceStatus, type Slice, type SliceKey } from '../core/slice.ts';
import { holdsLease } from '../core/slice-transitions.ts';
import { sliceId, toSlice, type MemoryTables, type SliceRow } from './memory-tables.ts';

export class InMemoryOverlapStore implements OverlapStore {
  constructor(private readonly tables: MemoryTables) {}

  async recentSlices(jobId: string, untilMs: number, limit: number): Promise<Slice[]> {
    const rows = [...this.tables.slices.values()].filter((row) => row.jobId === jobId && row.scheduledAt <= untilMs);
    return rows.sort((a, b) => b.scheduledAt - a.scheduledAt).slice(0, limit).map(toSlice);
  }

  async skipClaimed(key: SliceKey, fence: number, reason: string, now: number): Promise<void> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    settleSkipped(row, reason, now);
  }

  async deferClaimed(key: SliceKey, fence: number, now: number, sweepAt: number): Promise<void> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.status = SliceStatus.Enqueued;
    row.attempts -= 1;
    row.bufferedAt ??= now;
    row.sweepAt = sweepAt;
    dropLease(row);
  }

  async fenceOut(key: SliceKey, fence: number, now: number): Promise<boolean> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) return false;
    settleSkipped(row, 'replaced', now);
    row.fence += 1;
    return true;
  }
}

function settleSkipped(row: SliceRow, reason: string, now: number): void {
  row.status = SliceStatus.Skipped;
  row.skipReason = reason;
  row.finishedAt = now;
  delete row.sweepShard;
  delete row.sweepAt;
  dropLease(row);
}

function dropLease(row: SliceRow): void {
  delete row.leaseExpiresAt;
  delete row.leaseMessageId;
  delete row.leaseReceiveCount;
  delete row.owner;
}
