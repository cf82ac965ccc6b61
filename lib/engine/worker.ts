/**
 * Runs one work message: claim the slice on a fencing token, keep the lease,
 * wait for the slice's second, run the handler, commit on the fence; or
 * stand down, retry with backoff, or give up (DEAD).
 *
 * The disposition tells the caller (the SQS batch handler) what to do with
 * the message: `delete` when the slice needs nothing more from it, `keep`
 * when it must come back (a retry, a live lease elsewhere) or belongs to a
 * standby now (fenced out).
 */
import { MAX_LOOKAHEAD_MS } from '../core/advance-plan.ts';
import { retryDelayMs } from '../core/backoff.ts';
import { sleepUntil, type Clock } from '../core/clock.ts';
import {
  ChunkInputChangedError,
  FencedOutError,
  JobTimeoutError,
  LeaseLostError,
  OutcomeOnRecordError,
  UnrunnableMessageError,
} from '../core/errors.ts';
import { lifecycleEvent, type EventSink, type LifecycleEventDetails, type LifecycleEventType } from '../core/events.ts';
import { executionKey, isoSecond } from '../core/execution-key.ts';
import { startAtOf } from '../core/jitter.ts';
import { isOwnCommit } from '../core/ledger.ts';
import { supersededReason } from '../core/job-lifecycle.ts';
import { isTombstone, type JobRecord, type SkipReason } from '../core/job-record.ts';
import { lateFirstStart, planClaim, type IfMissing, type LateStart } from '../core/claim-plan.ts';
import { decodeWorkMessage, type WorkOrder } from '../core/messages.ts';
import type { ChunkStore } from '../core/chunks.ts';
import type {
  BusinessWrite,
  ClaimOutcome,
  DeadLetterSink,
  JobReader,
  OneTimeJobs,
  OverlapStore,
  SliceStore,
  WorkQueue,
} from '../core/ports.ts';
import {
  afterFailure,
  isTakeover,
  LEASE_EXPIRY_MARGIN_MS,
  lostClaimAction,
  messageVisibilitySeconds,
  sweepAtFor,
  SliceStatus,
  type Slice,
  type SliceDefinition,
  type SliceKey,
} from '../core/slice.ts';
import type { HandlerRegistry, JobContext, JobHandler } from './define-job.ts';
import { AttemptCommit } from './attempt-commit.ts';
import { AttemptChunks } from './chunk-commit.ts';
import { passOverlapGate } from './overlap-gate.ts';
import { HeldMessage, type LeaseTerms } from './held-message.ts';
import { sendAgainWhileUnsure, type SendAgainOptions } from './send-again.ts';

export type Disposition = 'delete' | 'keep';

export interface WorkerDeps {
  readonly workerId: string;
  readonly slices: SliceStore;
  /** The jobs a claimed slice is checked against before it runs (has the job moved on since its message was sent?). */
  readonly jobs: JobReader;
  readonly queue: WorkQueue;
  readonly deadLetters: DeadLetterSink;
  readonly events: EventSink;
  readonly clock: Clock;
  readonly handlers: HandlerRegistry;
  /** The work queue's visibility timeout as deployed; when it differs from the job's, the claim sets the job's. @default 3000 */
  readonly queueVisibilityMs?: number;
  /** Sweep slack added to a retry's due time. @default 30000 */
  readonly sweepGraceMs?: number;
  /** [0, 1); the jitter source. @default Math.random */
  readonly random?: () => number;
  readonly onError?: (error: unknown, context: string) => void;
  /** The overlap policy's store; without it every job runs as `allow`. */
  readonly overlap?: OverlapStore;
  /** Deletes a one-time job with `afterOneTime: 'delete'` once its slot is final. Without it such a job stays, completed. */
  readonly oneTimeJobs?: OneTimeJobs;
  /** Where `ctx.commitChunk` commits; without it, a chunked handler fails with InvalidChunkError. */
  readonly chunks?: ChunkStore;
}

export interface ReceivedMessage {
  readonly body: string;
  readonly receiptHandle: string;
  readonly messageId?: string;
  /** SQS's ApproximateReceiveCount of this delivery. */
  readonly receiveCount?: number;
  /** Since when SQS has hidden it at the earliest, by this worker's clock, when its event source says (lib/lambda/event-source.ts). @default the processing start */
  readonly hiddenSince?: number;
}

/** A message that surfaces more than this before its slice's second is hidden again (clock skew, long delays). */
const EARLY_TOLERANCE_MS = 2000;
/**
 * How soon a message comes back after an error before its claim settled: 1 s after its first delivery, then
 * full-jittered exponential backoff by delivery, up to 16 s. At a fixed second, a table that stayed throttled was
 * sent a claim for every pending slice each second, more each second as slices fell due, and never recovered
 * (docs/chaos.md, "Incidents behind the claim and heartbeat rules").
 */
const RETRY_AFTER_ERROR = { baseMs: 1000, maxMs: 16_000 };
/** The longest lookahead a scan may have (CRONFENCE_LOOKAHEAD_MS), plus the clock-skew margin. */
const FARTHEST_SLICE_AHEAD_MS = MAX_LOOKAHEAD_MS + LEASE_EXPIRY_MARGIN_MS;

export class Worker {
  constructor(private readonly deps: WorkerDeps) {}

  /**
   * @throws {MalformedMessageError} when the body is not a work message.
   * @throws {UnrunnableMessageError} when it names a slice that does not exist and carries no definition to create it with.
   */
  async process(message: ReceivedMessage): Promise<Disposition> {
    const order = decodeWorkMessage(message.body);
    const now = this.deps.clock.now();
    const held = new HeldMessage(
      this.deps.queue,
      this.deps.clock,
      message.receiptHandle,
      message.hiddenSince,
      this.deps.queueVisibilityMs ?? 3000,
    );
    try {
      return await this.claimAndRun(order, message, held, now, this.deps.clock.elapsed());
    } catch (error) {
      if (!(error instanceof UnrunnableMessageError)) await this.retrySoon(message, held);
      throw error;
    }
  }

  /**
   * Something failed before the message's visibility was set for the job (a
   * store error during the claim, say). Behind a Lambda event source the
   * queue's visibility is the function timeout: hide the message for seconds
   * instead (RETRY_AFTER_ERROR), so the slice is tried again soon (a standby's
   * refused claim must not add a lease to the failover), not minutes later by the sweep.
   */
  private async retrySoon(message: ReceivedMessage, held: HeldMessage): Promise<void> {
    const seconds = 1 + Math.floor(retryDelayMs(message.receiveCount ?? 1, RETRY_AFTER_ERROR, this.deps.random) / 1000);
    try {
      await held.hide(seconds);
    } catch (error) {
      this.deps.onError?.(error, 'hiding a message after an error');
    }
  }

  /** `now` and `nowMark`: when the claim goes out, on the clock's instant and on its `elapsed` reading. */
  private async claimAndRun(
    order: WorkOrder,
    message: ReceivedMessage,
    held: HeldMessage,
    now: number,
    nowMark: number,
  ): Promise<Disposition> {
    const { clock, slices } = this.deps;
    const key: SliceKey = { jobId: order.jobId, scheduledAt: order.scheduledAt };
    if (key.scheduledAt - now > EARLY_TOLERANCE_MS) {
      // No scan creates a slice further ahead than its longest lookahead: such a message is bogus unless its slice exists.
      if (key.scheduledAt - now > FARTHEST_SLICE_AHEAD_MS && !(await slices.get(key))) {
        throw new UnrunnableMessageError(
          message.body,
          `no such slice, and ${isoSecond(key.scheduledAt)} is further ahead than any scan creates slices`,
        );
      }
      // A slice created more than SQS's 900 s delay ahead (a long lookahead) surfaces early, with its batch: hidden
      // again until its second, in one request per batch, without a claim.
      await held.hide(Math.floor((key.scheduledAt - now) / 1000), { batched: true });
      return 'keep';
    }
    const visibilityMs = this.deps.queueVisibilityMs ?? 3000;
    // Kept hidden while the claim (and the overlap gate) are pending, through the held message: its lease judges from
    // that whether the message could surface under a live holder.
    const { claim, superseded, ifMissing, record } = await held.keepHiddenWhile(() => this.claimCurrent(order, now, message), {
      everyMs: visibilityMs / 2.5,
      seconds: Math.ceil(visibilityMs / 1000),
      onError: (error) => this.deps.onError?.(error, 'claim heartbeat'),
    });
    if (!claim.won) return this.standDown(claim.current, message, order, ifMissing, held);
    const slice = claim.slice;
    if (superseded) return this.skipSuperseded(slice, superseded);
    const late = record && !isTombstone(record) ? lateFirstStart(slice, record, clock.now()) : undefined;
    if (late) return this.recordLate(slice, late);
    const claimMs = clock.now() - now;
    // Judged before any hide below, which a message already handed to a standby would not undo; after a claim-phase
    // change still in flight, which may show the message never surfaced (a receive read late).
    const overtakeable = await held.mayHaveSurfaced(slice.policies.heartbeatMs);
    this.emit('claimed', slice, {
      fence: slice.fence,
      attempt: slice.attempts,
      claimMs,
      ...(overtakeable ? { overtakeable } : {}),
      ...(isTakeover(slice) && { takeover: true }),
    });
    if (slice.attempts > slice.policies.maxAttempts) {
      return this.giveUp(slice, `gave up after ${slice.policies.maxAttempts} attempts (the last worker stopped renewing its lease)`);
    }
    // A queue visibility far from the job's (Lambda forces it up to the function timeout) would hide a worker that
    // dies before its first heartbeat for that long: set the message's visibility at once. (With the schema's
    // queue and default policies they agree, and this costs no request.)
    const visibilitySeconds = messageVisibilitySeconds(slice.policies);
    if (Math.abs(visibilitySeconds * 1000 - visibilityMs) > slice.policies.heartbeatMs) {
      await held.hide(visibilitySeconds, { batched: true });
    }
    if (this.deps.overlap && (slice.policies.overlap ?? 'allow') !== 'allow') {
      const { workerId: id, overlap, slices: store, events, clock: time } = this.deps;
      // Kept hidden while the gate reads and writes, as during the claim: the lease starts after it, and a
      // slow gate (1.1 s in a LocalStack drill, after a 1.2 s claim) left its first renewal to find the message's
      // visibility nearly spent and disarm the fast takeover; that holder's kill then failed over on the lease (9.7 s).
      const gate = await held.keepHiddenWhile(
        () =>
          passOverlapGate(
            { workerId: id, overlap, slices: store, events, clock: time, sweepGraceMs: this.deps.sweepGraceMs ?? 30_000 },
            slice,
            held,
          ),
        {
          everyMs: slice.policies.heartbeatMs,
          seconds: visibilitySeconds,
          onError: (error) => this.deps.onError?.(error, 'overlap gate heartbeat'),
        },
      );
      if (gate !== 'run') return gate;
    }
    const handler = this.deps.handlers.get(slice.handler);
    if (!handler) return this.afterError(slice, new Error(`no handler named ${JSON.stringify(slice.handler)} in this worker`), held);
    return this.execute(slice, handler, held, { claimedAt: nowMark, overtakeable });
  }

  /**
   * Claims the slice. A message is identity only: one that names a generation
   * (a scanner's) is checked against the job read before the claim, and the
   * claim creates the slice only at an occurrence of that generation, with
   * the job's stored definition (core/claim-plan.ts); a message that names no
   * generation (a sweep's, a reconciler's, an operator slot's) claims only a
   * slice on record, and the job is read after that claim, so a change that
   * returned before it is always seen. A first run (not a takeover, which goes
   * on under the definition it started with) of a generation the job has moved
   * on from must not start.
   * @throws {UnrunnableMessageError} when the message names no slot the job has and none is on record.
   */
  private async claimCurrent(order: WorkOrder, now: number, message: ReceivedMessage): Promise<ClaimedOrder> {
    const { slices, jobs, workerId } = this.deps;
    const key: SliceKey = { jobId: order.jobId, scheduledAt: order.scheduledAt };
    const claimWith = (run?: SliceDefinition): Promise<ClaimOutcome> =>
      slices.claim(key, workerId, now, message.messageId, message.receiveCount, run);
    if (order.generation === undefined) {
      const claim = await claimWith();
      const ifMissing = { refusal: 'no such slice exists' };
      if (!claim.won || isTakeover(claim.slice)) return { claim, ifMissing };
      const record = await jobs.record(claim.slice.jobId);
      return { claim, ifMissing, record, ...superseded(record, claim.slice, now) };
    }
    const record = await jobs.record(order.jobId);
    const plan = planClaim(record, key, order.generation);
    if (plan.kind === 'refuse') throw new UnrunnableMessageError(message.body, plan.refusal);
    const claim = await claimWith(plan.kind === 'create' ? plan.run : undefined);
    const ifMissing = plan.kind === 'create' ? 'drop' : plan.ifMissing;
    if (!claim.won || isTakeover(claim.slice)) return { claim, ifMissing };
    return { claim, ifMissing, record, ...superseded(record, claim.slice, now) };
  }

  /**
   * SKIPPED with the change's reason, recorded no earlier than the change
   * itself (a worker's clock may run behind the one that made it).
   */
  private async skipSuperseded(slice: Slice, superseded: { reason: SkipReason; changedAt: number }): Promise<Disposition> {
    try {
      await this.deps.slices.skipClaimed(
        { key: slice, fence: slice.fence },
        superseded.reason,
        Math.max(this.deps.clock.now(), superseded.changedAt),
      );
    } catch (error) {
      if (error instanceof LeaseLostError) return 'keep';
      throw error;
    }
    this.emit('skipped', slice, { fence: slice.fence, reason: superseded.reason });
    return 'delete';
  }

  /**
   * A first start claimed too late for its job's catch-up window (MISSED) or
   * misfire policy (SKIPPED, `misfire`): recorded, with the reason, not run.
   */
  private async recordLate(slice: Slice, late: LateStart): Promise<Disposition> {
    try {
      await this.deps.slices.skipClaimed({ key: slice, fence: slice.fence }, late.reason, this.deps.clock.now(), late.status);
    } catch (error) {
      if (error instanceof LeaseLostError) return 'keep';
      throw error;
    }
    const type = late.status === SliceStatus.Missed ? 'missed' : 'skipped';
    this.emit(type, slice, { fence: slice.fence, reason: late.reason, count: 1 });
    await this.afterFinal(slice);
    return 'delete';
  }

  private async standDown(
    current: Slice | undefined,
    message: ReceivedMessage,
    order: WorkOrder,
    ifMissing: ClaimedOrder['ifMissing'],
    held: HeldMessage,
  ): Promise<Disposition> {
    const action = lostClaimAction(current, this.deps.clock.now(), message.messageId, message.receiveCount, order.generation);
    if (action.kind === 'drop' && action.reason === 'missing') {
      if (ifMissing === 'drop') return 'delete';
      throw new UnrunnableMessageError(message.body, ifMissing.refusal);
    }
    if (action.kind === 'drop') return 'delete';
    if (action.kind === 'leave') return 'keep';
    // Someone holds a live lease (or a retry is not yet due): come back when that ends.
    await held.hide(Math.ceil((action.untilMs - this.deps.clock.now()) / 1000));
    return 'keep';
  }

  private async execute(
    slice: Slice,
    handler: JobHandler,
    held: HeldMessage,
    claim: Pick<LeaseTerms, 'claimedAt' | 'overtakeable'>,
  ): Promise<Disposition> {
    const { clock, slices } = this.deps;
    const key: SliceKey = { jobId: slice.jobId, scheduledAt: slice.scheduledAt };
    held.startLease(
      slices,
      {
        key,
        fence: slice.fence,
        leaseMs: slice.policies.leaseMs,
        heartbeatMs: slice.policies.heartbeatMs,
        visibilitySeconds: messageVisibilitySeconds(slice.policies),
        ...(slice.leaseMessageId !== undefined && { messageId: slice.leaseMessageId }),
        ...claim,
      },
      (error) => this.deps.onError?.(error, 'lease renewal'),
    );
    const timeout = clock.timeout(slice.policies.timeoutMs);
    const signal = AbortSignal.any([held.leaseSignal, timeout]);
    const chunks = new AttemptChunks({
      store: this.deps.chunks,
      key,
      fence: slice.fence,
      owner: this.deps.workerId,
      clock,
      signal,
      abortReason: () => abortReason(signal, slice),
      random: this.deps.random,
    });
    // The final commit goes only after every chunk in flight settled, and not at all if one failed.
    const commit = new AttemptCommit(
      clock,
      executionKey(slice.jobId, slice.scheduledAt),
      signal,
      () => abortReason(signal, slice),
      async (writes) => {
        await chunks.close();
        await this.commitOnce(key, slice.fence, writes);
      },
    );
    const startedAt = { at: 0 };
    try {
      // A claim its message may have outrun: a standby given the message may have claimed since. Start only on a lease
      // a renewal confirmed, so two handlers never run; if the standby won, this one stands down unstarted.
      if (claim.overtakeable) await Promise.race([held.leaseConfirmed, rejectOnAbort(signal, slice)]);
      // Its second, or later by the job's jitter offset (core/jitter.ts); the key stays the nominal second. An `exact`
      // job's message surfaced in the second before, so this waits; a `within-second` one's at or after it, so this
      // returns at once, and waits only for a clock behind the sender's (core/start-precision.ts).
      const startAt = startAtOf(slice);
      await sleepUntil(clock, startAt, signal);
      startedAt.at = clock.now();
      this.emit('started', slice, { fence: slice.fence, attempt: slice.attempts, startLagMs: startedAt.at - startAt });
      await Promise.race([handler.run(this.context(slice, signal, (writes) => commit.call(writes), chunks)), rejectOnAbort(signal, slice)]);
      await commit.afterHandlerReturned();
    } catch (error) {
      // A timeout or lost lease can win the race while a commit is in flight: that commit's outcome decides.
      const cause = await commit.settledCause(error, slice.policies.leaseMs);
      await held.endLease();
      if (commit.landed || (commit.pending && (await this.ownCommitOnRecord(slice)))) return this.committed(slice, startedAt.at);
      if (cause instanceof FencedOutError || held.leaseLost) {
        this.emit('fenced_out', slice, { fence: slice.fence, attempt: slice.attempts, error: describe(cause) });
        return 'keep';
      }
      return this.afterError(slice, cause, held);
    }
    await held.endLease();
    return this.committed(slice, startedAt.at);
  }

  /**
   * Commits, sending the same transaction again while the outcome is unknown
   * (a timeout, a lost reply) or DynamoDB is busy (throttled, 5xx), with
   * backoff. The store recognises its own earlier commit by fence, owner and
   * outcome, so a try that landed is reported as success, never written twice.
   */
  private commitOnce(key: SliceKey, fence: number, writes: readonly BusinessWrite[]): Promise<void> {
    return sendAgainWhileUnsure(
      () => this.deps.slices.commit({ key, fence, owner: this.deps.workerId }, this.deps.clock.now(), writes),
      this.sendAgainReporting('commit refused for now or outcome unknown; sending the same commit again'),
    );
  }

  /** How an idempotent write is sent again while its outcome is unknown or the store refused it for now (send-again.ts). */
  private sendAgainReporting(what: string): SendAgainOptions {
    const { clock, random } = this.deps;
    return { clock, ...(random && { random }), onRetry: (error) => this.deps.onError?.(error, what) };
  }

  /** Did this claim's commit land? For a commit whose reply never came. */
  private async ownCommitOnRecord(slice: Slice): Promise<boolean> {
    try {
      return isOwnCommit(await this.deps.slices.getLedger(slice), slice.fence, this.deps.workerId, 'SUCCEEDED');
    } catch (error) {
      this.deps.onError?.(error, 'reading the ledger after an unanswered commit');
      return false;
    }
  }

  private async committed(slice: Slice, startedAt: number): Promise<Disposition> {
    this.emit('committed', slice, { fence: slice.fence, attempt: slice.attempts, durationMs: this.deps.clock.now() - startedAt });
    await this.afterFinal(slice);
    return 'delete';
  }

  /**
   * A one-time job whose slot is final deletes itself when asked to, sent
   * again while throttled or unanswered (a drill: one throttled delete left
   * the job stored). Best effort beyond that: a worker that dies first leaves
   * it completed (it never fires again), which `cronfence jobs delete` can finish.
   */
  private async afterFinal(slice: Slice): Promise<void> {
    const oneTimeJobs = this.deps.oneTimeJobs;
    if (slice.policies.afterOneTime !== 'delete' || !oneTimeJobs) return;
    try {
      await sendAgainWhileUnsure(
        () => oneTimeJobs.deleteAfterRun(slice.jobId, slice.generation),
        this.sendAgainReporting('deleting a one-time job after its run; sending it again'),
      );
    } catch (error) {
      this.deps.onError?.(error, 'deleting a one-time job after its run');
    }
  }

  private async afterError(slice: Slice, error: unknown, held: HeldMessage): Promise<Disposition> {
    const message = describe(error);
    // A chunk input that changed is met again by every retry: DEAD now, with the reason.
    if (afterFailure(slice.attempts, slice.policies) === 'dead' || error instanceof ChunkInputChangedError)
      return this.giveUp(slice, message);
    const now = this.deps.clock.now();
    const delay = retryDelayMs(
      slice.attempts,
      { baseMs: slice.policies.backoffBaseMs, maxMs: slice.policies.backoffMaxMs },
      this.deps.random,
    );
    const nextAttemptAt = now + delay;
    const sweepAt = sweepAtFor(SliceStatus.Failed, {
      scheduledAt: slice.scheduledAt,
      now,
      nextAttemptAt,
      graceMs: this.deps.sweepGraceMs ?? 30_000,
    });
    try {
      await this.deps.slices.recordFailure({ key: slice, fence: slice.fence }, { now, error: message, nextAttemptAt, sweepAt });
    } catch (failure) {
      if (failure instanceof LeaseLostError) {
        this.emit('fenced_out', slice, { fence: slice.fence, attempt: slice.attempts, error: message });
        return 'keep';
      }
      throw failure;
    }
    // Said once the failure is on record, before the hide, as the overlap gate's `buffered` is: a hide that fails
    // only brings the retry's message back sooner.
    this.emit('failed', slice, {
      fence: slice.fence,
      attempt: slice.attempts,
      error: message,
      retryAt: new Date(nextAttemptAt).toISOString(),
    });
    await held.hide(Math.ceil(delay / 1000));
    return 'keep';
  }

  private async giveUp(slice: Slice, error: string): Promise<Disposition> {
    const now = this.deps.clock.now();
    try {
      await sendAgainWhileUnsure(
        () => this.deps.slices.recordDead({ key: slice, fence: slice.fence, owner: this.deps.workerId }, now, error),
        this.sendAgainReporting('recording DEAD refused for now or outcome unknown; sending it again'),
      );
    } catch (failure) {
      // This very claim's commit landed after all (its reply was lost): it is committed, never dead-lettered.
      if (failure instanceof OutcomeOnRecordError && failure.recorded === 'SUCCEEDED') return this.committed(slice, now);
      if (failure instanceof FencedOutError) {
        this.emit('fenced_out', slice, { fence: slice.fence, attempt: slice.attempts, error });
        return 'keep';
      }
      throw failure;
    }
    // Dead once on record: said before the dead-letter notice, whose failure must not keep the event unpublished.
    this.emit('dead', slice, { fence: slice.fence, attempt: slice.attempts, error });
    await this.deps.deadLetters.send({
      executionKey: executionKey(slice.jobId, slice.scheduledAt),
      jobId: slice.jobId,
      scheduledAt: slice.scheduledAt,
      attempts: slice.attempts,
      error,
      at: now,
    });
    await this.afterFinal(slice);
    return 'delete';
  }

  private context(
    slice: Slice,
    signal: AbortSignal,
    commit: (writes: readonly BusinessWrite[]) => Promise<void>,
    chunks: AttemptChunks,
  ): JobContext {
    return {
      jobId: slice.jobId,
      scheduledAt: new Date(slice.scheduledAt),
      executionKey: executionKey(slice.jobId, slice.scheduledAt),
      fence: slice.fence,
      attempt: slice.attempts,
      signal,
      payload: slice.payload ?? {},
      worker: this.deps.workerId,
      commit: (writes = []) => commit(writes),
      commitChunk: (n, work, options) => chunks.commit(n, work, options),
      committedChunks: () => chunks.committed(),
    };
  }

  private emit(type: LifecycleEventType, slice: SliceKey, details: Omit<LifecycleEventDetails, 'worker'>): void {
    this.deps.events.emit(lifecycleEvent(type, slice, this.deps.clock.now(), { ...details, worker: this.deps.workerId }));
  }
}

/** A claim's outcome, what a lost one does when there is no slice, and why a won first run must not start. */
interface ClaimedOrder {
  readonly claim: ClaimOutcome;
  readonly ifMissing: IfMissing;
  readonly superseded?: { reason: SkipReason; changedAt: number };
  /** The job as read for a first run (before or after the claim). */
  readonly record?: JobRecord;
}

/** Why a first run of `slice` must not start, given the job's record: the job moved on since (its change's reason and time). */
function superseded(record: JobRecord | undefined, slice: Slice, now: number): Pick<ClaimedOrder, 'superseded'> {
  const reason = supersededReason(record, slice);
  return reason === undefined ? {} : { superseded: { reason, changedAt: record?.updatedAt ?? now } };
}

function abortReason(signal: AbortSignal, slice: Slice): Error {
  if (signal.reason instanceof LeaseLostError) return signal.reason;
  return new JobTimeoutError(executionKey(slice.jobId, slice.scheduledAt), slice.policies.timeoutMs);
}

function rejectOnAbort(signal: AbortSignal, slice: Slice): Promise<never> {
  return new Promise((_, reject) => {
    const onAbort = (): void => reject(abortReason(signal, slice));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
