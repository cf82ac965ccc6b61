/**
 * The in-memory stores' shared state: the tables cronfence keeps in
 * DynamoDB (jobs, the wheel, slices: a final slice carries its ledger record) and the user's own tables a commit writes
 * to. Rows hold the same attributes the DynamoDB items hold (the sweep index
 * keys, the claim's lease and sweep spans), so each in-memory operation can
 * apply the same effect as its DynamoDB counterpart; reads hand out copies,
 * as a store over the network would.
 *
 * Every operation runs to completion without awaiting in between, so on one
 * event loop it is atomic, as a DynamoDB conditional write is per item.
 */
import type { ChunkRecord, OutboxItem } from '../core/chunks.ts';
import type { DueSettle } from '../core/job-change.ts';
import type { JobRecord } from '../core/job-record.ts';
import type { OverlapLane } from '../core/overlap-policy.ts';
import type { Slice } from '../core/slice.ts';
import type { SetAsideJob } from '../core/set-aside.ts';
import type { PlacedEntry, ScanCursor, WheelEntry } from '../core/wheel.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** A slice item: the Slice plus what only the store reads. */
export interface SliceRow extends Mutable<Slice> {
  /** Present while the slice is live: its key in the sweep index. */
  sweepShard?: number;
  sweepAt?: number;
  /** Copied from the job's policies with the definition, so a later claim needs only the key. */
  leaseMs: number;
  /** History TTL (epoch seconds) once SKIPPED or MISSED; SUCCEEDED and DEAD are kept. */
  expiresAt?: number;
}

export interface MemoryTablesOptions {
  /** Slack before the sweep re-sends a live slice (added to a job's timeout on claim). @default 30000 */
  readonly sweepGraceMs?: number;
  /** History retention of SKIPPED and MISSED slices. @default 30 days */
  readonly sliceRetentionMs?: number;
  /** @default 1 */
  readonly shardCount?: number;
  /**
   * The user's own tables a commit may write to, each with its key attributes
   * (e.g. `{ payouts: ['id'] }`). A write to any other table is refused as a
   * missing table. @default {}
   */
  readonly businessTables?: Readonly<Record<string, readonly string[]>>;
}

/** One shard's partition of the wheel table. */
export interface WheelShard {
  readonly inbox: Map<string, WheelEntry>;
  readonly entries: PlacedEntry[];
  /** Jobs set aside (core/set-aside.ts), by job id. */
  readonly setAside: Map<string, SetAsideJob>;
  /** Settles a job change left to finish (core/job-change.ts), by `<jobId>#<generation>`. */
  readonly settles: Map<string, DueSettle>;
  cursor?: ScanCursor;
  /** The scans' claim (core/wheel.ts); 0 before the first. */
  claimedThrough: number;
}

export class MemoryTables {
  readonly jobs = new Map<string, JobRecord>();
  /** The wheel table, by shard. */
  readonly wheel = new Map<number, WheelShard>();
  readonly slices = new Map<string, SliceRow>();
  /** Each job's overlap lane (core/overlap-policy.ts): an item of the slices table in DynamoDB, kept apart here. */
  readonly overlapLanes = new Map<string, OverlapLane>();
  /** The chunks table: chunk records by chunk key (`<executionKey>#chunk-<n>`), outbox items by idempotency key. */
  readonly chunks = new Map<string, ChunkRecord>();
  readonly outbox = new Map<string, OutboxItem>();

  /** Table name → key JSON → item. */
  readonly business = new Map<string, Map<string, Record<string, unknown>>>();
  readonly sweepGraceMs: number;
  readonly sliceRetentionMs: number;
  readonly shardCount: number;
  readonly businessKeys: Readonly<Record<string, readonly string[]>>;

  constructor(options: MemoryTablesOptions = {}) {
    this.sweepGraceMs = options.sweepGraceMs ?? 30_000;
    this.sliceRetentionMs = options.sliceRetentionMs ?? 30 * 86_400_000;
    this.shardCount = options.shardCount ?? 1;
    this.businessKeys = options.businessTables ?? {};
    for (const table of Object.keys(this.businessKeys)) this.business.set(table, new Map());
  }

  /** Epoch seconds at which a slice final at `now` leaves history. */
  expiresAtSeconds(now: number): number {
    return Math.floor((now + this.sliceRetentionMs) / 1000);
  }

  /** A shard's wheel partition, empty until first written. */
  wheelShard(shard: number): WheelShard {
    let partition = this.wheel.get(shard);
    if (partition === undefined) {
      partition = { inbox: new Map(), entries: [], setAside: new Map(), settles: new Map(), claimedThrough: 0 };
      this.wheel.set(shard, partition);
    }
    return partition;
  }

  /** Items of one of the user's tables (copies), for assertions. */
  businessItems(tableName: string): Record<string, unknown>[] {
    return [...(this.business.get(tableName)?.values() ?? [])].map((item) => structuredClone(item));
  }
}

export function sliceId(key: { jobId: string; scheduledAt: number }): string {
  return `${key.jobId}\u0000${key.scheduledAt}`;
}

/** What a read of the slice item returns: the Slice's own fields, copied. */
export function toSlice(row: SliceRow): Slice {
  return structuredClone({
    jobId: row.jobId,
    scheduledAt: row.scheduledAt,
    status: row.status,
    fence: row.fence,
    owner: row.owner,
    leaseExpiresAt: row.leaseExpiresAt,
    leaseMessageId: row.leaseMessageId,
    leaseReceiveCount: row.leaseReceiveCount,
    claimToken: row.claimToken,
    attempts: row.attempts,
    claimedFrom: row.claimedFrom,
    handler: row.handler,
    policies: row.policies,
    payload: row.payload,
    shard: row.shard,
    generation: row.generation ?? 0,
    skipReason: row.skipReason,
    bufferedAt: row.bufferedAt,
    missedUntil: row.missedUntil,
    missedCount: row.missedCount,
    nextAttemptAt: row.nextAttemptAt,
    lastError: row.lastError,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    sweepAt: row.sweepAt,
  });
}
