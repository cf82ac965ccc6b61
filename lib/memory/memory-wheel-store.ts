/**
 * The WheelStore port in memory, with lib/aws/dynamo/wheel-store.ts's rules:
 * entries are only added (a redone scan repeats some, which readers dedupe),
 * an inbox entry never replaces a newer generation's, and the cursor and its claim only grow.
 */
import type { WheelStore } from '../core/ports.ts';
import type { SetAsideJob } from '../core/set-aside.ts';
import type { PlacedEntry, ScanCursor, ShardCursor, WheelEntry } from '../core/wheel.ts';
import type { MemoryTables, WheelShard } from './memory-tables.ts';

export class InMemoryWheelStore implements WheelStore {
  constructor(private readonly tables: MemoryTables) {}

  async readCursor(shard: number): Promise<ShardCursor | undefined> {
    return shardCursor(this.tables.wheelShard(shard));
  }

  async claim(shard: number, through: number): Promise<ShardCursor | undefined> {
    const partition = this.tables.wheelShard(shard);
    partition.claimedThrough = Math.max(partition.claimedThrough, through);
    return this.readCursor(shard);
  }

  async moveCursor(shard: number, cursor: ScanCursor): Promise<ShardCursor> {
    const partition = this.tables.wheelShard(shard);
    const current = partition.cursor;
    partition.cursor = current
      ? {
          scannedThrough: Math.max(current.scannedThrough, cursor.scannedThrough),
          reconciledThrough: Math.max(current.reconciledThrough, cursor.reconciledThrough),
        }
      : { ...cursor };
    return shardCursor(partition) as ShardCursor;
  }

  async nextBucket(shard: number, fromMs: number, toMs: number): Promise<number | undefined> {
    const buckets = this.tables
      .wheelShard(shard)
      .entries.map((entry) => entry.bucket)
      .filter((bucket) => bucket >= fromMs && bucket < toMs);
    return buckets.length === 0 ? undefined : Math.min(...buckets);
  }

  async entriesAt(shard: number, bucket: number): Promise<PlacedEntry[]> {
    return this.tables
      .wheelShard(shard)
      .entries.filter((entry) => entry.bucket === bucket)
      .map((entry) => ({ ...entry }));
  }

  async place(shard: number, entries: readonly PlacedEntry[]): Promise<void> {
    this.tables.wheelShard(shard).entries.push(...entries.map((entry) => ({ ...entry })));
  }

  async inbox(shard: number): Promise<WheelEntry[]> {
    return [...this.tables.wheelShard(shard).inbox.values()].map((entry) => ({ ...entry }));
  }

  async putInbox(shard: number, entry: WheelEntry): Promise<void> {
    const inbox = this.tables.wheelShard(shard).inbox;
    const current = inbox.get(entry.jobId);
    if (current === undefined || current.generation < entry.generation) inbox.set(entry.jobId, { ...entry });
  }

  async takeFromInbox(shard: number, entry: WheelEntry): Promise<void> {
    const inbox = this.tables.wheelShard(shard).inbox;
    if (inbox.get(entry.jobId)?.generation === entry.generation) inbox.delete(entry.jobId);
  }

  async setAside(shard: number, record: SetAsideJob): Promise<void> {
    const setAside = this.tables.wheelShard(shard).setAside;
    const current = setAside.get(record.jobId);
    if (current === undefined || current.generation <= record.generation) setAside.set(record.jobId, { ...record });
  }

  async setAsideJobs(shard: number): Promise<SetAsideJob[]> {
    return [...this.tables.wheelShard(shard).setAside.values()].map((record) => ({ ...record }));
  }
}

/** A copy of the partition's cursor with its claim (as DynamoDB's: never below `scannedThrough`); undefined before a scan moved it. */
function shardCursor(partition: WheelShard): ShardCursor | undefined {
  return partition.cursor && { ...partition.cursor, claimedThrough: Math.max(partition.claimedThrough, partition.cursor.scannedThrough) };
}
