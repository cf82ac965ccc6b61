/**
 * The engine's view of the outside world. The engine depends only on these
 * interfaces; lib/aws/ implements them over DynamoDB, SQS and EventBridge.
 */
import type { MissedRange, SkippedRange } from './advance-plan.ts';
import type { Claim, FencedClaim } from './claim.ts';
import type { DueSettle, JobWrite } from './job-change.ts';
import type { JobRecord, SkipReason } from './job-record.ts';
import type { LedgerRecord } from './ledger.ts';
import type { MessageBackChange } from './message-back.ts';
import type { OverlapLane } from './overlap-policy.ts';
import type { Slice, SliceDefinition, SliceKey, SliceStatus } from './slice.ts';
import type { SetAsideJob } from './set-aside.ts';
import type { RangeRecordOutcome } from './slice-transitions.ts';
import type { PlacedEntry, ScanCursor, ShardCursor, WheelEntry } from './wheel.ts';

/** A slice to create ENQUEUED, in the sweep index from `sweepAt`. */
export interface NewSlice extends SliceKey {
  readonly sweepAt: number;
}

/** Plain-JS attribute map; adapters marshal it. */
export type AttributeMap = Record<string, unknown>;

interface ExpressionParts {
  readonly conditionExpression?: string;
  readonly expressionAttributeNames?: Record<string, string>;
  readonly expressionAttributeValues?: AttributeMap;
}

/** A user's own DynamoDB write, committed in the same transaction as the slice. */
export type BusinessWrite =
  | { readonly put: { readonly tableName: string; readonly item: AttributeMap } & ExpressionParts }
  | {
      readonly update: { readonly tableName: string; readonly key: AttributeMap; readonly updateExpression: string } & ExpressionParts;
    }
  | { readonly delete: { readonly tableName: string; readonly key: AttributeMap } & ExpressionParts }
  | {
      readonly conditionCheck: {
        readonly tableName: string;
        readonly key: AttributeMap;
        readonly conditionExpression: string;
      } & Omit<ExpressionParts, 'conditionExpression'>;
    };

export type { MessageBackChange } from './message-back.ts';

export type ClaimOutcome = { readonly won: true; readonly slice: Slice } | { readonly won: false; readonly current: Slice | undefined };

/** How a claimed slice that will not run ends. */
export type NotRunStatus = typeof SliceStatus.Skipped | typeof SliceStatus.Missed;

export interface SliceStore {
  /**
   * Claim rule: see `isClaimable`. On a win, fence + 1, owner, lease and attempts are set.
   * `messageId`: the queue message this claim came from; the holder's own message
   * coming back (a later delivery: `receiveCount` higher) proves its heartbeats lapsed.
   */
  claim(key: SliceKey, owner: string, now: number, messageId?: string, receiveCount?: number, run?: SliceDefinition): Promise<ClaimOutcome>;
  /**
   * Moves the lease on. `messageBack` changes the holder's-message-back takeover with it (see `MessageBackChange`).
   * @throws {LeaseLostError} when the fence moved on or the slice is no longer RUNNING.
   */
  renew(claim: FencedClaim, now: number, leaseMs: number, messageBack?: MessageBackChange): Promise<void>;
  /**
   * Slice RUNNING → SUCCEEDED on the claim's fence and owner (core/claim.ts), the ledger record and `writes`, atomically.
   * An earlier attempt of this very commit that landed (lost reply) counts as success.
   * @throws {FencedOutError}
   */
  commit(claim: Claim, now: number, writes: readonly BusinessWrite[]): Promise<void>;
  /**
   * RUNNING on the claim's fence → SKIPPED with `reason` (not run: the job moved on, its overlap or misfire policy), or MISSED
   * (`status`: claimed past its catch-up window), out of the sweep index. @throws {LeaseLostError}
   */
  skipClaimed(claim: FencedClaim, reason: string, now: number, status?: NotRunStatus): Promise<void>;
  /** RUNNING → FAILED on the fence. @throws {LeaseLostError} */
  recordFailure(claim: FencedClaim, failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number }): Promise<void>;
  /** → DEAD with a DEAD ledger record, on the claim's fence and owner. @throws {FencedOutError} */
  recordDead(claim: Claim, now: number, error: string): Promise<void>;
  get(key: SliceKey): Promise<Slice | undefined>;
  /** Live slices of a shard whose sweep time has passed: their message may be lost. */
  findSweepable(shard: number, now: number, limit: number): Promise<SweepCandidate[]>;
  /**
   * Push a swept slice's next sweep to `sweepAt`, on condition that it still
   * has the sweep time the sweep read (a claim or failure since then set its own).
   */
  deferSweep(candidate: SweepCandidate, sweepAt: number): Promise<void>;
  getLedger(key: SliceKey): Promise<LedgerRecord | undefined>;
  /** A job's slices scheduled in `[fromMs, toMs)`, oldest first, read eventually consistent (the reconciler's check). */
  between(jobId: string, fromMs: number, toMs: number): Promise<Slice[]>;
  /**
   * Creates ENQUEUED slices of `run`'s generation, each in the sweep index at
   * its `sweepAt`, where there is no slice or only an older generation's
   * unrun one (`mayCreateSlice`). @returns the keys created.
   */
  enqueue(run: SliceDefinition, slices: readonly NewSlice[], now: number): Promise<SliceKey[]>;
  /**
   * Puts a RUNNING slice whose holder and message are gone into the sweep
   * index at `sweepAt`, on condition that it still has the claim's fence and is
   * out of the index. @returns whether it did.
   */
  followAbandoned(claim: FencedClaim, sweepAt: number): Promise<boolean>;
  /**
   * One item for a range of `run`'s occurrences: MISSED (older than the catch-up
   * window) or SKIPPED by the misfire policy; written unless a slice is there.
   * @returns `written`; `recorded` when this generation's range item is there
   * already (a racing or redone scan wrote it: its event went out then), with
   * the end that item records; `kept` when another slice keeps the instant (an
   * older generation ran it).
   */
  recordRange(jobId: string, run: SliceDefinition, range: MissedRange | SkippedRange, now: number): Promise<RangeRecordOutcome>;
  /**
   * SKIPPED with `reason` at each instant that has no slice yet (a claim that
   * creates it first wins): the due occurrences of a generation a change ended.
   * @returns how many were written.
   */
  settleAbsent(jobId: string, run: SliceDefinition, instants: readonly number[], reason: SkipReason, now: number): Promise<number>;
}

export type { RangeRecordOutcome };

export interface SweepCandidate extends SliceKey {
  /** The sweep time the index held when it was read. */
  readonly sweepAt: number;
}

/**
 * The timing wheel's items (core/wheel.ts): a shard's inbox, its entries by
 * bucket, and its cursor.
 */
export interface WheelStore {
  /** The shard's cursor, read consistently; undefined before its first scan moved it. */
  readCursor(shard: number): Promise<ShardCursor | undefined>;
  /**
   * Raises the shard's claim to `through` (never lowers it): a scan claims its
   * range before it reads a bucket of it (core/wheel.ts). @returns the cursor
   * then, read with the write; undefined before the shard's first scan moved it.
   */
  claim(shard: number, through: number): Promise<ShardCursor | undefined>;
  /**
   * Moves each field of the cursor to the larger of its value and `cursor`'s
   * (creating it when absent). @returns the cursor then, read with the write (its claim included).
   */
  moveCursor(shard: number, cursor: ScanCursor): Promise<ShardCursor>;
  /** The first bucket in `[fromMs, toMs)` that holds an entry, read consistently. */
  nextBucket(shard: number, fromMs: number, toMs: number): Promise<number | undefined>;
  /** The entries of one bucket, read consistently. */
  entriesAt(shard: number, bucket: number): Promise<PlacedEntry[]>;
  /** Writes entries into their buckets, packed (many jobs to an item), expiring by TTL. */
  place(shard: number, entries: readonly PlacedEntry[], now: number): Promise<void>;
  /** The shard's inbox: generations no scan has taken up yet. */
  inbox(shard: number): Promise<WheelEntry[]>;
  /** Puts a job's generation in the inbox, unless a newer one of that job is there. */
  putInbox(shard: number, entry: WheelEntry): Promise<void>;
  /** Removes a job's inbox entry if it still holds `entry.generation`. */
  takeFromInbox(shard: number, entry: WheelEntry): Promise<void>;
  /** Records that a job's generation was set aside (core/set-aside.ts), unless a newer generation of it is on record. */
  setAside(shard: number, record: SetAsideJob): Promise<void>;
  /** The shard's set-aside records, one per job at most (`isSetAsideNow` tells a current one from history). */
  setAsideJobs(shard: number): Promise<SetAsideJob[]>;
}

/** Job records as a scanner, the reconciler and a worker read them (tombstones included). */
export interface JobReader {
  /** One record, read consistently. */
  record(id: string): Promise<JobRecord | undefined>;
  /** Many records; `consistent: false` reads at half the price and may be a moment stale. */
  records(ids: readonly string[], consistent: boolean): Promise<Map<string, JobRecord>>;
  /** Every record of a shard (a shard's first scan seeds its inbox from them). */
  recordsOfShard(shard: number): Promise<JobRecord[]>;
}

/**
 * The reads and writes of the overlap policy (core/overlap-policy.ts), apart
 * from SliceStore: only jobs with a policy other than `allow` use them.
 */
export interface OverlapStore {
  /** The job's overlap lane, read consistently; undefined before its first take (or once expired). */
  lane(jobId: string): Promise<OverlapLane | undefined>;
  /**
   * Gives the lane to the run at `runAt`, on condition that it is still as
   * `seen` was read (absent, when `seen` is undefined). @returns false when
   * another take came first.
   */
  takeLane(jobId: string, seen: OverlapLane | undefined, runAt: number, now: number): Promise<boolean>;
  /**
   * The first of the job's slices scheduled strictly between `afterMs` and
   * `beforeMs` that is ENQUEUED or RUNNING (`isInLine`), reading at most
   * `limit` slices from `afterMs` on, consistently.
   */
  firstInLine(jobId: string, afterMs: number, beforeMs: number, limit: number): Promise<Slice | undefined>;
  /**
   * RUNNING on the claim's fence → ENQUEUED to wait behind a run: the claim undone
   * (attempts - 1), `bufferedAt` set on the first wait, swept at `sweepAt`.
   * @throws {LeaseLostError}
   */
  deferClaimed(claim: FencedClaim, now: number, sweepAt: number): Promise<void>;
  /** Another run, RUNNING on the claim's fence → SKIPPED `replaced` with fence + 1 (it is fenced out). @returns false when it had moved on. */
  fenceOut(claim: FencedClaim, now: number): Promise<boolean>;
}

/**
 * The primitives a job change (core/job-change.ts) runs over: the reads, the
 * one all-or-nothing write, and the settling of slices it leaves behind. The
 * use case is engine/job-repository.ts, the same over every store (it reads
 * one record through the JobReader).
 */
export interface JobStore {
  /** Every record, tombstones included, read consistently. */
  records(): Promise<JobRecord[]>;
  /** A job's slices scheduled in `[fromMs, toMs)` (from `fromMs` on, without `toMs`), oldest first, read consistently. */
  slicesOf(jobId: string, fromMs: number, toMs?: number): Promise<Slice[]>;
  /** The settles of `jobId` a change left unfinished, oldest generation first. */
  pendingSettles(shard: number, jobId: string): Promise<DueSettle[]>;
  /**
   * The job on the version read, its inbox entry and its settle record, all or nothing.
   * @returns false when a condition failed or the write met another: read again and plan again.
   */
  writeChange(write: JobWrite): Promise<boolean>;
  /** Removes a settle once its occurrences all have a record. */
  clearSettle(settle: DueSettle): Promise<void>;
  /**
   * SETTLE PENDING: the job's pending slices of generations below `generation` → SKIPPED with `reason`
   * (`maySettle`). @returns how many.
   */
  settlePending(request: {
    readonly jobId: string;
    readonly shard: number;
    readonly generation: number;
    readonly reason: SkipReason;
    readonly now: number;
  }): Promise<number>;
}

/** What a worker does to a one-time job (`afterOneTime: 'delete'`) once its slot is final. */
export interface OneTimeJobs {
  /** Deletes the job if it still has `generation` (see `planDeleteAfterOneTimeRun`). */
  deleteAfterRun(jobId: string, generation: number): Promise<void>;
}

export interface WorkMessage extends SliceKey {
  /** Seconds SQS keeps the message hidden (0 to 900). */
  readonly delaySeconds: number;
  /** The job generation it is sent for (a scanner's message): identity only, never what runs (core/messages.ts). */
  readonly generation?: number;
}

export interface WorkQueue {
  /** Sends in batches of 10. */
  send(messages: readonly WorkMessage[]): Promise<void>;
  /**
   * Hides a received message for `seconds` (renewal of a lease, or a retry delay). Once `signal` aborts the change is
   * abandoned, neither sent nor tried again (lib/engine/held-message.ts: never after its receipt may have lapsed).
   */
  hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void>;
  /**
   * The same, for the visibility changes a batch asks for at once (a claim's,
   * behind Lambda from the function timeout down to the lease; an early
   * message's, until its second): it may wait for a quarter second without a new
   * change (750 ms at most) to share one request with the others of its batch. Heartbeats use `hide`, whose timing
   * the held message counts on.
   */
  hideBatched(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void>;
}

export interface DeadLetterRecord {
  readonly executionKey: string;
  readonly jobId: string;
  readonly scheduledAt: number;
  readonly attempts: number;
  readonly error: string;
  readonly at: number;
}

export interface DeadLetterSink {
  send(record: DeadLetterRecord): Promise<void>;
}

export interface ScanRequest {
  readonly shard: number;
}

export interface ScanQueue {
  send(requests: readonly ScanRequest[]): Promise<void>;
  /** As WorkQueue.hide: `signal` abandons a change not yet landed. */
  hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void>;
}
