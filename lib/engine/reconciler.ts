/**
 * The reconciler: the backstop for a message lost on its way (the claim
 * creates the slice, so an occurrence whose message is lost leaves no trace
 * but the wheel entry that sent it). Once a bucket's occurrences are a grace
 * overdue, it reads the bucket's entries again and, per job of its current
 * generation, the slices those occurrences should have (one Query), and acts
 * on what core/reconcile.ts finds: a missing slice is created ENQUEUED in the
 * sweep index and sent, an abandoned RUNNING one is put in the sweep index
 * and sent; from there the sweep follows each to a final state. Reads only,
 * when nothing was lost.
 */
import type { Clock } from '../core/clock.ts';
import { UnplannableJobError } from '../core/errors.ts';
import { inDueIndex } from '../core/job-lifecycle.ts';
import { definitionOf, isTombstone, type StoredJob } from '../core/job-record.ts';
import { jitterOffsetMs } from '../core/jitter.ts';
import { mapBounded } from '../core/map-bounded.ts';
import type { JobReader, SliceStore, WheelStore, WorkQueue } from '../core/ports.ts';
import { reconcileOccurrences } from '../core/reconcile.ts';
import { occurrencesBetween, scheduleOf } from '../core/schedule.ts';
import { distinctEntries, isReconcilable, WHEEL_BUCKET_MS, type PlacedEntry } from '../core/wheel.ts';
import { sendDelayed, type OutgoingMessage } from './send-delayed.ts';
import { planned } from './set-aside.ts';

const JOB_CONCURRENCY = 8;
/** Occurrences checked per read of their slices (a bucket of a per-second job holds five; a late entry may cover a catch-up window). */
const OCCURRENCES_PER_READ = 1000;

export interface ReconcilerDeps {
  readonly wheel: WheelStore;
  readonly jobs: JobReader;
  readonly slices: SliceStore;
  readonly queue: WorkQueue;
  readonly clock: Clock;
  /** Slack after an occurrence's start before the reconciler and the sweep look for it. */
  readonly sweepGraceMs: number;
  /** A failure the scan survived (a bucket or a job left for the next scan). */
  readonly onError?: (error: unknown, context: string) => void;
}

export class Reconciler {
  constructor(private readonly deps: ReconcilerDeps) {}

  /**
   * Reconciles the buckets of `shard` in `[from, to)` that hold entries, in
   * order, until `stop()`. @returns where it got to (exclusive): the cursor's
   * next `reconciledThrough`.
   */
  async reconcile(
    shard: number,
    from: number,
    to: number,
    stop: () => boolean,
    report: { reconciled: number; errors: number },
  ): Promise<number> {
    let position = from;
    try {
      while (position < to && !stop()) {
        const bucket = await this.deps.wheel.nextBucket(shard, position, to);
        if (bucket === undefined) return to;
        const entries = distinctEntries(await this.deps.wheel.entriesAt(shard, bucket));
        // Occurrences sent late (a new generation's first ones) get the grace from their send: this bucket waits for a later scan.
        if (!entries.every((entry) => isReconcilable(entry, this.deps.clock.now(), this.deps.sweepGraceMs))) return bucket;
        report.reconciled += await this.reconcileBucket(bucket, entries);
        position = bucket + WHEEL_BUCKET_MS;
      }
    } catch (error) {
      report.errors++;
      this.deps.onError?.(error, `reconciling shard ${shard}`);
    }
    return position;
  }

  private async reconcileBucket(bucket: number, entries: readonly PlacedEntry[]): Promise<number> {
    const records = await this.deps.jobs.records([...new Set(entries.map((entry) => entry.jobId))], false);
    const now = this.deps.clock.now();
    const outgoing: OutgoingMessage[] = [];
    await mapBounded(entries, JOB_CONCURRENCY, async (entry) => {
      const record = records.get(entry.jobId);
      // An older generation's occurrences were settled by the change that ended it (JobRepository); only the current one is checked.
      if (record === undefined || isTombstone(record) || record.generation !== entry.generation || !inDueIndex(record)) return;
      try {
        outgoing.push(...(await this.reconcileEntry(record, entry, bucket, now)));
      } catch (error) {
        // A row that cannot be planned is the scan's to set aside (it meets every bucket first); the others go on.
        if (!(error instanceof UnplannableJobError)) throw error;
        this.deps.onError?.(error, `reconciling job ${record.id}`);
      }
    });
    return sendDelayed(this.deps.queue, this.deps.clock, outgoing);
  }

  /** An entry's occurrences, a page of {@link OCCURRENCES_PER_READ} at a time (one Query each). */
  private async reconcileEntry(job: StoredJob, entry: PlacedEntry, bucket: number, now: number): Promise<OutgoingMessage[]> {
    const { offset, schedule } = planned(job.id, () => ({
      offset: jitterOffsetMs(job.id, job.policies.jitterMs),
      schedule: scheduleOf(job),
    }));
    const outgoing: OutgoingMessage[] = [];
    for (let from = entry.from; ;) {
      const occurrences = planned(job.id, () =>
        occurrencesBetween(schedule, from, bucket + WHEEL_BUCKET_MS - offset, OCCURRENCES_PER_READ),
      );
      const last = occurrences.at(-1);
      if (last === undefined) return outgoing;
      outgoing.push(...(await this.reconcileOccurrences(job, occurrences, offset, now)));
      if (occurrences.length < OCCURRENCES_PER_READ) return outgoing;
      from = last + 1;
    }
  }

  private async reconcileOccurrences(
    job: StoredJob,
    occurrences: readonly number[],
    offset: number,
    now: number,
  ): Promise<OutgoingMessage[]> {
    const first = occurrences[0] as number;
    const slices = await this.deps.slices.between(job.id, first, (occurrences.at(-1) as number) + 1);
    const actions = reconcileOccurrences(occurrences, job.generation, slices, now, this.deps.sweepGraceMs);
    if (actions.length === 0) return [];
    const sweepAt = now + this.deps.sweepGraceMs;
    const missing = actions
      .filter((action) => action.kind === 'enqueue')
      .map(({ scheduledAt }) => ({ jobId: job.id, scheduledAt, sweepAt }));
    const created = missing.length === 0 ? [] : await this.deps.slices.enqueue(definitionOf(job), missing, now);
    const abandoned: OutgoingMessage[] = [];
    for (const action of actions) {
      if (action.kind !== 'sweep') continue;
      const slice = slices.find((candidate) => candidate.scheduledAt === action.scheduledAt);
      if (slice && (await this.deps.slices.followAbandoned({ key: slice, fence: slice.fence }, sweepAt)))
        abandoned.push({ jobId: job.id, scheduledAt: action.scheduledAt });
    }
    const { startPrecision } = job.policies;
    return [...created.map((key) => ({ ...key, startAt: key.scheduledAt + offset, startPrecision })), ...abandoned];
  }
}
