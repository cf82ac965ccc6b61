/**
 * The engine's view of the outside world. The engine depends only on these
 * interfaces; lib/aws/ implements them over DynamoDB, SQS and EventBridge.
 */
import type { MissedRange, SkippedRange } from './advance-plan.ts';
import type { JobSpec } from './job-spec.ts';
import type { LedgerRecord } from './ledger.ts';
import type { OperatorNote, PauseState } from './operator.ts';
import type { Slice, SliceKey } from './slice.ts';

/** A job as stored: its spec plus the scheduler's bookkeeping. */
export interface StoredJob extends JobSpec {
  readonly shard: number;
  /** Epoch ms of the next occurrence no slice exists for yet. */
  readonly nextFireAt: number;
  /** Bumped on every change; scanners and updates condition on it. */
  readonly version: number;
  /** Bumped on every change of definition, pause, resume and delete (see core/job-lifecycle.ts); slices carry it. */
  readonly generation: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** While paused by an operator: who, why, since when, and until when (see core/job-lifecycle.ts `isActiveAt`). */
  readonly pause?: PauseState;
  /** The last resume by an operator: who and why. */
  readonly resumed?: OperatorNote;
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

export type ClaimOutcome =
  | { readonly won: true; readonly slice: Slice }
  | { readonly won: false; readonly current: Slice | undefined };

export interface SliceStore {
  /**
   * Claim rule: see `isClaimable`. On a win, fence + 1, owner, lease and attempts are set.
   * `messageId`: the queue message this claim came from; the holder's own message
   * coming back (a later delivery: `receiveCount` higher) proves its heartbeats lapsed.
   */
  claim(key: SliceKey, owner: string, now: number, messageId?: string, receiveCount?: number): Promise<ClaimOutcome>;
  /**
   * `disarmMessageBack`: also forget the message the lease was claimed with, so
   * that message coming back no longer admits a standby (the holder could not
   * keep it hidden); takeover then waits for the lease to expire.
   * @throws {LeaseLostError} when the fence moved on or the slice is no longer RUNNING.
   */
  renew(key: SliceKey, fence: number, now: number, leaseMs: number, disarmMessageBack?: boolean): Promise<void>;
  /**
   * Slice RUNNING → SUCCEEDED on the fence, the ledger record and `writes`, atomically.
   * An earlier attempt of this very commit that landed (lost reply) counts as success.
   * @throws {FencedOutError}
   */
  commit(key: SliceKey, fence: number, owner: string, now: number, writes: readonly BusinessWrite[]): Promise<void>;
  /** RUNNING → FAILED on the fence. @throws {LeaseLostError} */
  recordFailure(key: SliceKey, fence: number, failure: { now: number; error: string; nextAttemptAt: number; sweepAt: number }): Promise<void>;
  /** → DEAD with a DEAD ledger record, on the fence. @throws {FencedOutError} */
  recordDead(key: SliceKey, fence: number, owner: string, now: number, error: string): Promise<void>;
  get(key: SliceKey): Promise<Slice | undefined>;
  /** Live slices of a shard whose sweep time has passed: their message may be lost. */
  findSweepable(shard: number, now: number, limit: number): Promise<SweepCandidate[]>;
  /** Live slices of a shard that scan `scanId` created, due for a sweep in `[fromMs, toMs)`: re-sent after that scanner crashed. */
  findCreatedByScan(shard: number, scanId: string, fromMs: number, toMs: number, limit: number): Promise<SweepCandidate[]>;
  /**
   * Push a swept slice's next sweep to `sweepAt`, on condition that it still
   * has the sweep time the sweep read (a claim or failure since then set its own).
   */
  deferSweep(candidate: SweepCandidate, sweepAt: number): Promise<void>;
  getLedger(key: SliceKey): Promise<LedgerRecord | undefined>;
}

export interface SweepCandidate extends SliceKey {
  /** The sweep time the index held when it was read. */
  readonly sweepAt: number;
}

export interface NewSlice extends SliceKey {
  readonly sweepAt: number;
  /** The scan request that created it (its queue message id), if any. */
  readonly scanId?: string;
}

export type AdvanceOutcome =
  | { readonly kind: 'advanced'; readonly created: readonly SliceKey[] }
  /**
   * Another scanner or an update moved the job first; nothing was written.
   * `alreadyCreated`: slices of this advance that exist, unclaimed, with this
   * advance's scan id: an earlier try of this very advance landed and its
   * reply was lost (a request timeout the SDK retried), so no message was
   * sent for them yet. Sending one is the caller's (a duplicate is harmless).
   */
  | { readonly kind: 'conflict'; readonly alreadyCreated: readonly SliceKey[] };

export interface ScheduleStore {
  /** Enabled jobs of `shard` with `nextFireAt < untilMs`, oldest first. */
  queryDue(shard: number, untilMs: number, limit: number): Promise<StoredJob[]>;
  /**
   * In one transaction: create each slice (if absent), record `missed` (one
   * MISSED item for the whole range, at its first occurrence), record `skipped`
   * (likewise one SKIPPED item with its reason) and move the job to
   * `nextFireAt`, on condition that its version is still `job.version`.
   */
  advance(job: StoredJob, slices: readonly NewSlice[], nextFireAt: number, now: number, missed?: MissedRange, skipped?: SkippedRange): Promise<AdvanceOutcome>;
}

/**
 * The reads and writes of the overlap policy (core/overlap-policy.ts), apart
 * from SliceStore: only jobs with a policy other than `allow` use them.
 */
export interface OverlapStore {
  /** The job's slices scheduled at or before `untilMs`, newest first, at most `limit`, read consistently. */
  recentSlices(jobId: string, untilMs: number, limit: number): Promise<Slice[]>;
  /** RUNNING on `fence` → SKIPPED with `reason`, out of the sweep index. @throws {LeaseLostError} */
  skipClaimed(key: SliceKey, fence: number, reason: string, now: number): Promise<void>;
  /**
   * RUNNING on `fence` → ENQUEUED to wait behind a run: the claim undone
   * (attempts - 1), `bufferedAt` set on the first wait, swept at `sweepAt`.
   * @throws {LeaseLostError}
   */
  deferClaimed(key: SliceKey, fence: number, now: number, sweepAt: number): Promise<void>;
  /** Another run, RUNNING on `fence` → SKIPPED `replaced` with fence + 1 (it is fenced out). @returns false when it had moved on. */
  fenceOut(key: SliceKey, fence: number, now: number): Promise<boolean>;
}

/** What a worker does to a one-time job (`afterOneTime: 'delete'`) once its slot is final. */
export interface OneTimeJobs {
  /** Deletes the job if it still has `generation` (see `planDeleteAfterOneTimeRun`). */
  deleteAfterRun(jobId: string, generation: number): Promise<void>;
}

export interface WorkMessage extends SliceKey {
  /** Seconds SQS keeps the message hidden (0 to 900). */
  readonly delaySeconds: number;
}

export interface WorkQueue {
  /** Sends in batches of 10. */
  send(messages: readonly WorkMessage[]): Promise<void>;
  /** Hides a received message for `seconds` (renewal of a lease, or a retry delay). */
  hide(receiptHandle: string, seconds: number): Promise<void>;
  /**
   * The same, for the visibility changes a batch asks for at once (a claim's,
   * behind Lambda from the function timeout down to the lease; an early
   * message's, until its second): it may wait for a quarter second without a new
   * change (750 ms at most) to share one request with the others of its batch. Heartbeats use `hide`, whose timing
   * the lease keeper counts on.
   */
  hideBatched(receiptHandle: string, seconds: number): Promise<void>;
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
  hide(receiptHandle: string, seconds: number): Promise<void>;
}
