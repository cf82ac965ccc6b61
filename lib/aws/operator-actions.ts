/**
 * What an operator (the CLI) or the application (`cronfence/client`) asks of
 * a job beyond its schedule: trigger a slot now, backfill past occurrences,
 * pause and resume one job or a whole group. Each is recorded with who and
 * why. The slots go through dynamo/operator-slots.ts (the scanner's slice
 * builder) and then the work queue, so a worker claims, fences and commits
 * them exactly as it does a scheduled slice; a lost send is found by the sweep.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseSlotPayload, planBackfill } from '../core/backfill-plan.ts';
import type { Random } from '../core/backoff.ts';
import type { Clock } from '../core/clock.ts';
import { JobVersionConflictError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { validatePauseUntil, validateReason, validateRequestId, type OperatorSlot } from '../core/operator.ts';
import type { SliceStore, WorkQueue } from '../core/ports.ts';
import type { StoredJob } from '../core/job-record.ts';
import { isFinal, SliceStatus, type SliceKey, type SliceStatus as Status } from '../core/slice.ts';
import type { CronfenceConfig } from './config.ts';
import type { JobChangeResult, JobRepository } from '../engine/job-repository.ts';
import { writeBackfillSlot, writeTriggerSlot, type SlotOutcome } from './dynamo/operator-slots.ts';

/** Reads of a job that changed under a write before giving up. */
const JOB_CHANGE_TRIES = 5;
const SEND_BATCH = 10;

export interface Actor {
  readonly actor: string;
  readonly reason?: string;
}

export interface TriggerRequest extends Actor {
  /** Retrying with the same id finds the same slot; the slot's key derives from it. */
  readonly requestId: string;
  /** The slot's own payload (a JSON object, or its text); absent: the job's. */
  readonly payload?: string | Record<string, unknown>;
}

export interface TriggerResult {
  /** False when this request id had already made its slot (a retry). */
  readonly created: boolean;
  readonly key: SliceKey;
  readonly executionKey: string;
  readonly status: Status | undefined;
}

export interface BackfillRequest extends Actor {
  readonly from: number;
  readonly to: number;
  /** Slots written per second. @default unlimited */
  readonly ratePerSecond?: number;
  readonly onProgress?: (progress: BackfillProgress) => void;
}

export interface BackfillProgress {
  readonly total: number;
  readonly done: number;
  readonly created: number;
  readonly existing: number;
}

export interface BackfillResult extends BackfillProgress {
  /** Occurrences that already had a final slice (run, dead, skipped or missed): not run again. */
  readonly alreadyFinal: number;
  /** Occurrences whose slice is still live (enqueued, running, retrying): left to it. */
  readonly alreadyLive: number;
}

/** A pause's or resume's result: `changed` false when the job already was as asked (paused so, or not paused). */
export interface OperatorChangeResult extends JobChangeResult {
  readonly changed: boolean;
}

export interface PauseRequest extends Actor {
  /** Epoch ms the job resumes by itself. */
  readonly until?: number;
}

type OperatorConfig = Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'sweepGraceMs' | 'sliceRetentionMs'>;

export class OperatorActions {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: OperatorConfig,
    private readonly clock: Clock,
    private readonly jobs: JobRepository,
    private readonly slices: SliceStore,
    private readonly queue: WorkQueue,
    /** The jitter of a busy slot write's next try. */
    private readonly random: Random,
  ) {}

  /**
   * An extra slot of the job, due now, run once however often the same request id is sent.
   * @throws {JobNotFoundError} @throws {InvalidOperatorRequestError} naming the field and value.
   */
  async trigger(jobId: string, request: TriggerRequest): Promise<TriggerResult> {
    const requestId = validateRequestId(request.requestId);
    const reason = validateReason(request.reason, false);
    const payload = request.payload === undefined ? undefined : parseSlotPayload(request.payload);
    const { outcome } = await this.withLiveJob(jobId, (job, now) => {
      const note: OperatorSlot = { action: 'trigger', actor: request.actor, reason, at: now, requestId };
      return writeTriggerSlot(this.dynamo, this.config, job, { requestId, note, payload }, now, this.clock, this.random);
    });
    const key = (outcome as Exclude<SlotOutcome, { kind: 'job-changed' }>).key;
    const slice = await this.slices.get(key);
    // A retry re-sends a slot still waiting: its first send may be what failed (a duplicate is dropped by the claim).
    if (slice?.status === SliceStatus.Enqueued) await this.queue.send([{ ...key, delaySeconds: 0 }]);
    return { created: outcome.kind === 'created', key, executionKey: executionKey(key.jobId, key.scheduledAt), status: slice?.status };
  }

  /**
   * Each occurrence in [from, to) that has no slice gets one, once; an
   * occurrence with a slice (final or live) is left as it is, so the same
   * backfill run again writes nothing.
   * @throws {JobNotFoundError} @throws {InvalidOperatorRequestError}
   */
  async backfill(jobId: string, request: BackfillRequest): Promise<BackfillResult> {
    const reason = validateReason(request.reason, false);
    let job = await this.jobs.require(jobId);
    const occurrences = planBackfill(job, request.from, request.to, this.clock.now());
    const progress = { total: occurrences.length, done: 0, created: 0, existing: 0, alreadyFinal: 0, alreadyLive: 0 };
    const outbox: SliceKey[] = [];
    const startedAt = this.clock.now();
    for (const scheduledAt of occurrences) {
      if (request.ratePerSecond !== undefined)
        await this.clock.sleep(startedAt + (progress.done * 1000) / request.ratePerSecond - this.clock.now());
      const written = await this.withLiveJob(
        jobId,
        (current, now) => {
          const note: OperatorSlot = { action: 'backfill', actor: request.actor, reason, at: now };
          return writeBackfillSlot(this.dynamo, this.config, current, scheduledAt, note, now, this.clock, this.random);
        },
        job,
      );
      job = written.job;
      if (written.outcome.kind === 'created') {
        progress.created++;
        outbox.push({ jobId, scheduledAt });
        if (outbox.length >= SEND_BATCH) await this.send(outbox.splice(0));
      } else {
        progress.existing++;
        const existing = await this.slices.get({ jobId, scheduledAt });
        if (existing !== undefined && isFinal(existing.status)) progress.alreadyFinal++;
        else progress.alreadyLive++;
        // As trigger: the same backfill again re-sends a slot still waiting, whose first send may be what failed
        // (a duplicate is dropped by the claim); without it, the sweep sends it a grace later.
        if (existing?.status === SliceStatus.Enqueued) outbox.push({ jobId, scheduledAt });
        if (outbox.length >= SEND_BATCH) await this.send(outbox.splice(0));
      }
      progress.done++;
      request.onProgress?.({ total: progress.total, done: progress.done, created: progress.created, existing: progress.existing });
    }
    await this.send(outbox);
    return progress;
  }

  /** @throws {JobNotFoundError} @throws {InvalidOperatorRequestError} naming `reason` or `until`. */
  async pause(jobId: string, request: PauseRequest): Promise<OperatorChangeResult> {
    const reason = validateReason(request.reason, true);
    const until = validatePauseUntil(request.until, this.clock.now());
    return this.reportingChange(jobId, () =>
      this.jobs.pause(jobId, { actor: request.actor, reason, ...(until !== undefined && { until }) }),
    );
  }

  /** @throws {JobNotFoundError} */
  async resume(jobId: string, request: Actor): Promise<OperatorChangeResult> {
    const reason = validateReason(request.reason, false);
    return this.reportingChange(jobId, () => this.jobs.resume(jobId, { actor: request.actor, reason }));
  }

  /** Pauses every job of `group`; an empty group is an empty result. */
  async pauseGroup(group: string, request: PauseRequest): Promise<OperatorChangeResult[]> {
    validateReason(request.reason, true);
    const members = await this.jobs.listGroup(group);
    const results: OperatorChangeResult[] = [];
    for (const job of members) results.push(await this.pause(job.id, request));
    return results;
  }

  async resumeGroup(group: string, request: Actor): Promise<OperatorChangeResult[]> {
    const members = await this.jobs.listGroup(group);
    const results: OperatorChangeResult[] = [];
    for (const job of members) results.push(await this.resume(job.id, request));
    return results;
  }

  /** A change that leaves the job as it was (already paused so, or not paused) writes nothing: its version stays. */
  private async reportingChange(jobId: string, change: () => Promise<JobChangeResult>): Promise<OperatorChangeResult> {
    const before = await this.jobs.require(jobId);
    const result = await change();
    return { ...result, changed: result.job.version !== before.version };
  }

  private async send(keys: readonly SliceKey[]): Promise<void> {
    if (keys.length > 0) await this.queue.send(keys.map((key) => ({ ...key, delaySeconds: 0 })));
  }

  /** Runs `write` on the live job, reading it again when it changed in between. */
  private async withLiveJob(
    jobId: string,
    write: (job: StoredJob, now: number) => Promise<SlotOutcome>,
    known?: StoredJob,
  ): Promise<{ job: StoredJob; outcome: SlotOutcome }> {
    let job = known ?? (await this.jobs.require(jobId));
    for (let attempt = 1; ; attempt++) {
      const outcome = await write(job, this.clock.now());
      if (outcome.kind !== 'job-changed') return { job, outcome };
      if (attempt >= JOB_CHANGE_TRIES) throw new JobVersionConflictError(jobId, job.version);
      job = await this.jobs.require(jobId);
    }
  }
}
