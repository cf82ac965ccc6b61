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
import { dropLease, skipRow } from './memory-slice-store.ts';
import { sliceId, toSlice, type MemoryTables } from './memory-tables.ts';

export class InMemoryOverlapStore implements OverlapStore {
  constructor(private readonly tables: MemoryTables) {}

  async recentSlices(jobId: string, untilMs: number, limit: number): Promise<Slice[]> {
    const rows = [...this.tables.slices.values()].filter((row) => row.jobId === jobId && row.scheduledAt <= untilMs);
    return rows.sort((a, b) => b.scheduledAt - a.scheduledAt).slice(0, limit).map(toSlice);
  }

  async deferClaimed(key: SliceKey, fence: number, now: number, sweepAt: number): Promise<void> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.status = SliceStatus.Enqueued;
    row.attempts -= 1;
    row.bufferedAt ??= now;
    row.sweepShard = row.shard;
    row.sweepAt = sweepAt;
    dropLease(row);
  }

  async fenceOut(key: SliceKey, fence: number, now: number): Promise<boolean> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) return false;
    skipRow(row, 'replaced', now, this.tables.expiresAtSeconds(now));
    row.fence += 1;
    return true;
  }
}
