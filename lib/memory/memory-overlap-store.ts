/**
 * The OverlapStore port in memory, with lib/aws/dynamo/overlap-ops.ts's
 * conditions: a lane is taken on the version read; each slice write needs
 * the slice held on the given fence (`holdsLease`, core/slice-transitions.ts).
 */
import type { FencedClaim } from '../core/claim.ts';
import { LeaseLostError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { isInLine, type OverlapLane } from '../core/overlap-policy.ts';
import type { OverlapStore } from '../core/ports.ts';
import { SliceStatus, type Slice } from '../core/slice.ts';
import { holdsLease } from '../core/slice-transitions.ts';
import { dropLease, skipRow } from './memory-slice-store.ts';
import { sliceId, toSlice, type MemoryTables } from './memory-tables.ts';

export class InMemoryOverlapStore implements OverlapStore {
  constructor(private readonly tables: MemoryTables) {}

  async lane(jobId: string): Promise<OverlapLane | undefined> {
    const lane = this.tables.overlapLanes.get(jobId);
    return lane && { ...lane };
  }

  async takeLane(jobId: string, seen: OverlapLane | undefined, runAt: number): Promise<boolean> {
    const lane = this.tables.overlapLanes.get(jobId);
    if (lane?.version !== seen?.version) return false;
    this.tables.overlapLanes.set(jobId, { runAt, version: (seen?.version ?? 0) + 1 });
    return true;
  }

  async firstInLine(jobId: string, afterMs: number, beforeMs: number, limit: number): Promise<Slice | undefined> {
    const read = [...this.tables.slices.values()]
      .filter((row) => row.jobId === jobId && row.scheduledAt > afterMs && row.scheduledAt < beforeMs)
      .sort((a, b) => a.scheduledAt - b.scheduledAt)
      .slice(0, limit);
    const first = read.find(isInLine);
    return first && toSlice(first);
  }

  async deferClaimed({ key, fence }: FencedClaim, now: number, sweepAt: number): Promise<void> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence);
    row.status = SliceStatus.Enqueued;
    row.attempts -= 1;
    row.bufferedAt ??= now;
    row.sweepShard = row.shard;
    row.sweepAt = sweepAt;
    dropLease(row);
  }

  async fenceOut({ key, fence }: FencedClaim, now: number): Promise<boolean> {
    const row = this.tables.slices.get(sliceId(key));
    if (!holdsLease(row, fence)) return false;
    skipRow(row, 'replaced', now, this.tables.expiresAtSeconds(now));
    row.fence += 1;
    return true;
  }
}
