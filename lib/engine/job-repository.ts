/**
 * Job CRUD, the use case, once for every store. What each operation does to
 * the job and its slices is decided in core/job-lifecycle.ts, and the writes
 * of the change in core/job-change.ts; here the plan runs over the JobStore
 * port: one write conditioned on the version read (a racing update is never
 * overwritten; a lost race is retried from a fresh read), then:
 * - the new generation, if it runs, is in its shard's wheel inbox, where the
 *   next scan takes it up (and a scan of the shard is asked for);
 * - the older generations' pending slices are settled SKIPPED, and so is
 *   every occurrence the ended generation had due with no slice yet, so none
 *   is left without a record.
 *
 * A deleted job stays as a tombstone item (hidden from get and list), so a
 * job re-added under the same id continues its generation.
 */
import type { Clock } from '../core/clock.ts';
import { JobNotFoundError, JobVersionConflictError } from '../core/errors.ts';
import { planJobWrite, settleReasonOf, type DueSettle } from '../core/job-change.ts';
import {
  existingJob,
  inboxEntryOf,
  MAX_SETTLED_OCCURRENCES,
  planDelete,
  planDeleteAfterOneTimeRun,
  planPause,
  planPut,
  planResume,
  withoutRecord,
  type LifecycleChange,
} from '../core/job-lifecycle.ts';
import { isTombstone, type JobRecord, type StoredJob } from '../core/job-record.ts';
import { parseJobSpec, type JobOrigin } from '../core/job-spec.ts';
import { ledgerOfSlices, type LedgerRecord } from '../core/ledger.ts';
import type { OperatorNote, PauseState } from '../core/operator.ts';
import type { JobReader, JobStore, ScanQueue, SliceStore, WheelStore } from '../core/ports.ts';
import { occurrencesBetween, scheduleOf } from '../core/schedule.ts';
import { isSetAsideNow, type SetAsideJob } from '../core/set-aside.ts';
import { shardOf } from '../core/shard.ts';
import type { Slice } from '../core/slice.ts';

const VERSION_RETRIES = 5;

/** What a JobRepository runs over, wired at the composition root (lib/lambda/wiring.ts, lib/memory/index.ts). */
export interface JobRepositoryPorts {
  readonly jobs: JobStore;
  /** One record, read consistently. */
  readonly reader: Pick<JobReader, 'record'>;
  /** Where a change's due occurrences with no slice are written SKIPPED. */
  readonly slices: Pick<SliceStore, 'settleAbsent'>;
  /** Where a scan records a job it set aside. */
  readonly wheel: Pick<WheelStore, 'setAsideJobs'>;
  readonly clock: Clock;
  readonly shardCount: number;
  /** Handler names a put must name one of; any, when undefined. */
  readonly knownHandlers?: readonly string[];
  /** Where a change asks for a scan of its shard (the scan queue); without it, changes wait for the tick. */
  readonly scans?: ScanQueue;
}

/** What a lifecycle operation did. */
export interface JobChangeResult<T extends JobRecord = StoredJob> {
  readonly job: T;
  /** Slices of older generations settled SKIPPED: pending ones, and due occurrences that had none. */
  readonly skipped: number;
  /**
   * A scan of the job's shard was requested, so its new generation is taken up within a second or two instead of
   * at the next tick (`scans`, `requestScan`); false when none was needed, none is wired, or the request failed
   * (the next tick takes the change up: nothing is lost).
   */
  readonly scanRequested?: boolean;
}

export class JobRepository {
  constructor(private readonly ports: JobRepositoryPorts) {}

  /**
   * Creates or replaces a job. Storing the definition it already has changes nothing.
   * @throws {InvalidJobSpecError} before anything is written.
   */
  async put(input: unknown): Promise<JobChangeResult & { created: boolean }> {
    const spec = parseJobSpec(input, { knownHandlers: this.ports.knownHandlers });
    let firstPlan: { absent: boolean; generation: number | undefined } | undefined;
    const result = await this.change(spec.id, (previous, now) => {
      const plan = planPut(spec, previous, now, this.ports.shardCount);
      firstPlan ??= { absent: previous === undefined || isTombstone(previous), generation: plan?.next.generation };
      return plan;
    });
    // Judged from the first read: a create whose reply was lost lands before the SDK sends it again, and the
    // resend then finds this very item (same generation), not someone else's.
    const created = firstPlan?.absent === true && result.job.generation === firstPlan.generation;
    return { ...result, created };
  }

  async get(id: string): Promise<StoredJob | undefined> {
    const record = await this.ports.reader.record(id);
    return isTombstone(record) ? undefined : record;
  }

  /** @throws {JobNotFoundError} */
  async require(id: string): Promise<StoredJob> {
    const job = await this.get(id);
    if (!job) throw new JobNotFoundError(id);
    return job;
  }

  async list(): Promise<StoredJob[]> {
    return (await this.ports.jobs.records())
      .filter((record): record is StoredJob => !isTombstone(record))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * The job's set-aside record (core/set-aside.ts) when a scan set its current
   * generation aside: its stored row could not be planned or sent. One read of
   * the shard's few set-aside records.
   */
  async setAsideOf(job: { readonly id: string; readonly generation: number }): Promise<SetAsideJob | undefined> {
    const records = await this.ports.wheel.setAsideJobs(shardOf(job.id, this.ports.shardCount));
    const record = records.find((candidate) => candidate.jobId === job.id);
    return isSetAsideNow(record, job) ? record : undefined;
  }

  /** Jobs of a group (`--group`), by id. */
  async listGroup(group: string): Promise<StoredJob[]> {
    return (await this.list()).filter((job) => job.group === group);
  }

  /**
   * @param pause who paused it, why, and (optional) when it resumes by itself (see core/job-lifecycle.ts planPause).
   * @throws {JobNotFoundError}
   */
  pause(id: string, pause?: Omit<PauseState, 'at'>): Promise<JobChangeResult> {
    return this.change(id, (previous, now) => planPause(existingJob(id, previous), now, pause && { ...pause, at: now }));
  }

  /** @throws {JobNotFoundError} */
  resume(id: string, note?: Omit<OperatorNote, 'at'>): Promise<JobChangeResult> {
    return this.change(id, (previous, now) => planResume(existingJob(id, previous), now, note && { ...note, at: now }));
  }

  /**
   * @param options.origin the deleting owner: a job of the other origin is left alone (`deleted: false`, `foreign: true`).
   * @returns deleted: false when there was no such job.
   */
  async delete(id: string, options: { origin?: JobOrigin } = {}): Promise<{ deleted: boolean; skipped: number; foreign?: boolean }> {
    if (options.origin !== undefined) {
      const job = await this.get(id);
      if (job?.origin !== undefined && job.origin !== options.origin) return { deleted: false, skipped: 0, foreign: true };
    }
    try {
      const { skipped } = await this.change(id, (previous, now) => planDelete(existingJob(id, previous), now));
      return { deleted: true, skipped };
    } catch (error) {
      if (error instanceof JobNotFoundError) return { deleted: false, skipped: 0 };
      throw error;
    }
  }

  /** A one-time job's run is over: delete it, unless it was redefined since (OneTimeJobs, core/job-lifecycle.ts). */
  async deleteAfterRun(id: string, generation: number): Promise<void> {
    await this.change(id, (previous, now) => planDeleteAfterOneTimeRun(previous, generation, now));
  }

  /** Slices of a job from `sinceMs` on, oldest first. */
  slicesOf(jobId: string, sinceMs: number): Promise<Slice[]> {
    return this.ports.jobs.slicesOf(jobId, sinceMs);
  }

  /** Ledger records of a job from `sinceMs` on, oldest first: those its final slices carry. */
  async ledgerOf(jobId: string, sinceMs: number): Promise<LedgerRecord[]> {
    return ledgerOfSlices(await this.slicesOf(jobId, sinceMs));
  }

  /**
   * Read, finish what an interrupted change of this job left (core/job-change.ts),
   * plan, then write the job with its inbox entry and its settle record in
   * one all-or-nothing write on the version read, and settle. A plan of undefined
   * means nothing to change: the settles still run, so a call repeated after
   * a failure anywhere in an earlier one completes it.
   */
  private async change<T extends JobRecord>(
    id: string,
    plan: (previous: JobRecord | undefined, now: number) => LifecycleChange<T> | undefined,
  ): Promise<JobChangeResult<T>> {
    const { jobs, clock, shardCount } = this.ports;
    const shard = shardOf(id, shardCount);
    for (let attempt = 1; ; attempt++) {
      const previous = await this.ports.reader.record(id);
      const now = clock.now();
      const finished = await this.finishSettles(shard, id, now);
      const change = plan(previous, now);
      if (change === undefined) {
        const job = previous as T;
        // A retry after a call that stored the change but failed before its scan request asks again.
        const skipped = finished + (await this.settle(job, now, settleReasonOf(job)));
        return { job, skipped, scanRequested: await this.requestScan(job, shard) };
      }
      const write = planJobWrite(previous, change, shard, now);
      if (!(await jobs.writeChange(write))) {
        if (attempt >= VERSION_RETRIES) throw new JobVersionConflictError(id, previous?.version ?? 0);
        continue;
      }
      const scanRequested = await this.requestScan(change.next, shard);
      const skipped = (await this.settle(change.next, now, change.settle)) + (write.settle ? await this.settleDue(write.settle, now) : 0);
      return { job: change.next, skipped: finished + skipped, scanRequested };
    }
  }

  /** Settles a change of this job left unfinished (its call failed after the transaction). @returns the slices written. */
  private async finishSettles(shard: number, id: string, now: number): Promise<number> {
    let skipped = 0;
    for (const settle of await this.ports.jobs.pendingSettles(shard, id)) skipped += await this.settleDue(settle, now);
    return skipped;
  }

  /**
   * The ended generation's due occurrences with no slice (core/job-lifecycle.ts
   * `dueWithoutSlice`): SKIPPED with the change's reason, unless a claim creates
   * one first; then the settle record goes.
   */
  private async settleDue(settle: DueSettle, now: number): Promise<number> {
    const occurrences = occurrencesBetween(scheduleOf(settle), settle.from, settle.to, MAX_SETTLED_OCCURRENCES);
    let written = 0;
    if (occurrences.length > 0) {
      const recorded = await this.ports.jobs.slicesOf(settle.jobId, settle.from, settle.to);
      const missing = withoutRecord(occurrences, settle.generation, recorded);
      written = await this.ports.slices.settleAbsent(settle.jobId, settle.run, missing, settle.reason, now);
    }
    await this.ports.jobs.clearSettle(settle);
    return written;
  }

  private settle(job: JobRecord, now: number, reason: LifecycleChange['settle']): Promise<number> {
    if (job.generation <= 1) return Promise.resolve(0);
    return this.ports.jobs.settlePending({
      jobId: job.id,
      shard: shardOf(job.id, this.ports.shardCount),
      generation: job.generation,
      reason,
      now,
    });
  }

  /**
   * Asks for a scan of the shard when `record` waits in its inbox (a put of a
   * running job, a resume, a pause with an end), so its occurrences until the
   * next tick are not late. Best effort: the tick takes the inbox up anyway.
   */
  private async requestScan(record: JobRecord | undefined, shard: number): Promise<boolean> {
    const { scans } = this.ports;
    if (scans === undefined || record === undefined || inboxEntryOf(record) === undefined) return false;
    try {
      await scans.send([{ shard }]);
      return true;
    } catch {
      return false;
    }
  }
}
