/**
 * Scans one shard: turns every occurrence due in the lookahead window into a
 * slice (one advance transaction per job, version-fenced, so racing scanners
 * create each slice once), sends the new slices with a delay that surfaces
 * them at their second, and sweeps live slices whose message may be lost.
 */
import type { Clock } from '../core/clock.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import type { NewSlice, ScheduleStore, SliceStore, StoredJob, SweepCandidate, WorkMessage, WorkQueue } from '../core/ports.ts';
import { planAdvance } from '../core/advance-plan.ts';
import { scheduleOf } from '../core/schedule.ts';
import { isoSecond } from '../core/execution-key.ts';
import { startAtOf } from '../core/jitter.ts';
import { sweepAgainAt, sweepAtFor, SliceStatus, type SliceKey } from '../core/slice.ts';
import { mapBounded } from '../core/map-bounded.ts';
import { StoreBusyError } from '../core/errors.ts';

/** One transaction holds 100 items: 99 slices and the job. */
export const MAX_SLICES_PER_JOB_SCAN = 99;
const JOBS_PER_PAGE = 100;
const JOB_CONCURRENCY = 8;
/** SQS's SendMessageBatch limit. */
const SEND_BATCH = 10;
const SWEEP_LIMIT = 200;

export interface ScannerDeps {
  readonly scannerId: string;
  readonly schedules: ScheduleStore;
  readonly slices: SliceStore;
  readonly queue: WorkQueue;
  readonly events: EventSink;
  readonly clock: Clock;
  /** How far ahead slices are created. Must exceed the tick interval. */
  readonly lookaheadMs: number;
  /** Slack after a slice's due time before the sweep re-sends it. */
  readonly sweepGraceMs: number;
  /** A job whose advance failed (the store busy after retries); the scan goes on with the others. */
  readonly onError?: (error: unknown, context: string) => void;
}

export interface ScanOptions {
  /** Names this scan request (its queue message id); slices it creates carry it. */
  readonly scanId?: string;
  /** This scan request was delivered before: its first scanner may have died between creating slices and sending them. */
  readonly redelivered?: boolean;
  /** Stop taking new pages of jobs after this instant (the caller re-queues the shard). */
  readonly deadline?: number;
}

export interface ScanReport {
  shard: number;
  jobsAdvanced: number;
  slicesCreated: number;
  conflicts: number;
  missed: number;
  /** Due occurrences the misfire policy did not run (recorded SKIPPED). */
  skipped: number;
  swept: number;
  resent: number;
  /** Jobs whose advance failed (they stay due; the shard is scanned again). */
  errors: number;
  /** True when the deadline or a failed advance left due jobs behind: the caller re-queues the shard. */
  incomplete: boolean;
}

export class Scanner {
  constructor(private readonly deps: ScannerDeps) {}

  async scanShard(shard: number, options: ScanOptions = {}): Promise<ScanReport> {
    const now = this.deps.clock.now();
    const windowEnd = now + this.deps.lookaheadMs;
    const report: ScanReport = { shard, jobsAdvanced: 0, slicesCreated: 0, conflicts: 0, missed: 0, skipped: 0, swept: 0, resent: 0, errors: 0, incomplete: false };
    // Slices go out in full batches as their jobs advance, not after the whole page: in a burst the first
    // workers start while the scan is still advancing (the benchmark saw the first commit 13 s in, otherwise).
    const outbox: OutgoingSlice[] = [];
    // Jobs whose advance failed with an outcome this scan cannot know (its tries timed out: a late one may have landed).
    const unknownOutcomes = new Set<string>();
    const sendFullBatches = async (): Promise<void> => {
      while (outbox.length >= SEND_BATCH) await this.send(outbox.splice(0, SEND_BATCH));
    };
    for (;;) {
      const jobs = await this.deps.schedules.queryDue(shard, windowEnd, JOBS_PER_PAGE);
      await mapBounded(jobs, JOB_CONCURRENCY, async (job) => {
        await this.catchUp(job, now, windowEnd, report, options, unknownOutcomes, async (created) => {
          outbox.push(...created);
          await sendFullBatches();
        });
      });
      await this.send(outbox.splice(0));
      if (jobs.length < JOBS_PER_PAGE) break;
      if (options.deadline !== undefined && this.deps.clock.now() >= options.deadline) {
        report.incomplete = true;
        break;
      }
    }
    report.swept = await this.sweep(shard, now);
    if (options.scanId && (options.redelivered || unknownOutcomes.size > 0)) {
      report.resent = await this.resendCreatedByScan(shard, options.scanId, now, windowEnd, options.redelivered ? undefined : unknownOutcomes);
    }
    return report;
  }

  /**
   * Advances one job until its window is covered: a job with more due
   * occurrences than one transaction holds (a per-second job after an outage)
   * catches up in this scan, not one transaction per scan. A busy store ends
   * the job's turn: it stays due, and the shard is scanned again soon.
   */
  private async catchUp(
    job: StoredJob,
    now: number,
    windowEnd: number,
    report: ScanReport,
    options: ScanOptions,
    unknownOutcomes: Set<string>,
    onCreated: (created: readonly OutgoingSlice[]) => Promise<void>,
  ): Promise<void> {
    let current: StoredJob | undefined = job;
    while (current !== undefined && current.nextFireAt < windowEnd) {
      try {
        current = await this.advance(current, now, windowEnd, report, options.scanId, onCreated);
      } catch (error) {
        report.errors++;
        report.incomplete = true;
        // A busy store refused the advance and wrote nothing; any other failure may have written it.
        if (!(error instanceof StoreBusyError)) unknownOutcomes.add(job.id);
        this.deps.onError?.(error, `advancing job ${job.id}`);
        return;
      }
      if (options.deadline !== undefined && this.deps.clock.now() >= options.deadline) {
        if (current !== undefined && current.nextFireAt < windowEnd) report.incomplete = true;
        return;
      }
    }
  }

  /** One advance transaction; returns the job as it now stands, or undefined when another scanner or an update won. */
  private async advance(
    job: StoredJob,
    now: number,
    windowEnd: number,
    report: ScanReport,
    scanId: string | undefined,
    onCreated: (created: readonly OutgoingSlice[]) => Promise<void>,
  ): Promise<StoredJob | undefined> {
    const plan = planAdvance({
      schedule: scheduleOf(job),
      nextFireAt: job.nextFireAt,
      now,
      lookaheadMs: windowEnd - now,
      catchUpWindowMs: job.policies.catchUpWindowMs,
      limit: MAX_SLICES_PER_JOB_SCAN,
      misfire: job.policies.misfire,
    });
    const { occurrences: inThisCall, nextFireAt } = plan;
    // Jitter moves when a slice is delivered and swept, never its key (core/jitter.ts).
    const startOf = (scheduledAt: number): number => startAtOf({ jobId: job.id, scheduledAt, policies: job.policies });
    const slices: NewSlice[] = inThisCall.map((scheduledAt) => ({
      jobId: job.id,
      scheduledAt,
      scanId,
      sweepAt: sweepAtFor(SliceStatus.Enqueued, { scheduledAt: startOf(scheduledAt), now, graceMs: this.deps.sweepGraceMs }),
    }));
    const outcome = await this.deps.schedules.advance(job, slices, nextFireAt, now, plan.missed, plan.skipped);
    if (outcome.kind === 'conflict') {
      report.conflicts++;
      // This scan's own earlier try landed unanswered: its slices have no message yet.
      if (outcome.alreadyCreated.length > 0) await onCreated(outcome.alreadyCreated.map((key) => ({ ...key, startAt: startOf(key.scheduledAt) })));
      return undefined;
    }
    if (plan.missed) {
      // Downtime longer than the catch-up window: older occurrences are recorded MISSED (one item for the range, in
      // the advance's transaction) and reported, not run. Only the scanner whose advance won reports them.
      report.missed += plan.missed.count;
      this.deps.events.emit(
        lifecycleEvent('missed', { jobId: job.id, scheduledAt: plan.missed.from }, now, {
          fence: 0,
          worker: this.deps.scannerId,
          count: plan.missed.count,
          until: isoSecond(plan.missed.to),
        }),
      );
    }
    if (plan.skipped) {
      // Due occurrences inside the window that the job's misfire policy does not run: one SKIPPED record, one event.
      report.skipped += plan.skipped.count;
      this.deps.events.emit(
        lifecycleEvent('skipped', { jobId: job.id, scheduledAt: plan.skipped.from }, now, {
          fence: 0,
          worker: this.deps.scannerId,
          count: plan.skipped.count,
          until: isoSecond(plan.skipped.to),
          reason: plan.skipped.reason,
        }),
      );
    }
    report.jobsAdvanced++;
    report.slicesCreated += outcome.created.length;
    await onCreated(outcome.created.map((key) => ({ ...key, startAt: startOf(key.scheduledAt) })));
    return { ...job, nextFireAt, version: job.version + 1 };
  }

  /**
   * Sends slices with the delay that surfaces each at its second, computed
   * now, as each batch goes out: a long scan's later batches would otherwise
   * surface late by the time the scan had taken.
   */
  private async send(keys: readonly OutgoingSlice[]): Promise<void> {
    if (keys.length === 0) return;
    const now = this.deps.clock.now();
    await this.deps.queue.send(keys.map((key) => delayed(key, now)));
  }

  /** Re-sends live slices whose sweep time passed: their message was lost or their worker vanished. */
  private async sweep(shard: number, now: number): Promise<number> {
    const stale = await this.deps.slices.findSweepable(shard, now, SWEEP_LIMIT);
    return this.resend(stale, now);
  }

  /**
   * This scan request was delivered before, so its first scanner may have died
   * between creating slices and sending them; or an advance of this scan
   * failed with an unknown outcome (every try timed out, and one may have
   * landed later: the job is no longer due, so no later scan sees it, and
   * only the sweep, a grace after the slice's second, would send it). Re-send
   * the live slices that scan id created, of `jobIds` when given (they carry
   * the id; the index does not say which are still unclaimed); a duplicate is
   * harmless (a claim admits one, and a copy of a claimed slice is dropped), a
   * missing message is not.
   */
  private async resendCreatedByScan(shard: number, scanId: string, now: number, windowEnd: number, jobIds?: ReadonlySet<string>): Promise<number> {
    const created = await this.deps.slices.findCreatedByScan(shard, scanId, now - this.deps.sweepGraceMs, windowEnd + this.deps.sweepGraceMs, 1000);
    const upcoming = jobIds ? created.filter((slice) => jobIds.has(slice.jobId)) : created;
    await this.send(upcoming);
    return upcoming.length;
  }

  private async resend(candidates: readonly SweepCandidate[], now: number): Promise<number> {
    if (candidates.length === 0) return 0;
    await this.send(candidates);
    await mapBounded(candidates, JOB_CONCURRENCY, (key) => this.deps.slices.deferSweep(key, sweepAgainAt(key, now, this.deps.sweepGraceMs)));
    return candidates.length;
  }
}

/** A slice on its way to the work queue; `startAt`: when it is meant to start (its jittered time), if not its second. */
type OutgoingSlice = SliceKey & { readonly startAt?: number };

/** SQS's longest DelaySeconds; a later start surfaces early and the worker waits out the rest holding the lease. */
const MAX_DELAY_SECONDS = 900;

function delayed(key: OutgoingSlice, now: number): WorkMessage {
  const startAt = key.startAt ?? key.scheduledAt;
  return { jobId: key.jobId, scheduledAt: key.scheduledAt, delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.floor((startAt - now) / 1000))) };
}
