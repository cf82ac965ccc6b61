/**
 * Scans one shard: takes up the wheel's buckets from the shard's cursor to
 * the lookahead (core/wheel.ts), sending every occurrence due in them with
 * the delay that surfaces it at its second, and writing each job's next
 * entry; takes up the inbox (generations a change made); reconciles the
 * buckets old enough (reconciler.ts); sweeps the slices waiting in the sweep
 * index; then moves the cursor. A scan writes no slice and no job on the
 * happy path: the claim creates the slice (core/messages.ts).
 *
 * A scanner that dies before moving the cursor leaves its range to the next
 * scan, which sends the same occurrences again: a duplicate message is
 * harmless (the claim admits one, a copy of a claimed slice is dropped), a
 * missing one would not be.
 */
import { UnplannableJobError } from '../core/errors.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { NEVER, type AdvancePlan } from '../core/advance-plan.ts';
import { afterRecordedRange, assertRowShape, planBucket, racingScanNow } from '../core/bucket-plan.ts';
import { isoSecond } from '../core/execution-key.ts';
import { inboxEntryOf, inDueIndex } from '../core/job-lifecycle.ts';
import { definitionOf, isTombstone, type JobRecord, type StoredJob } from '../core/job-record.ts';
import { jitterOffsetMs } from '../core/jitter.ts';
import { mapBounded } from '../core/map-bounded.ts';
import type { SweepCandidate } from '../core/ports.ts';
import { sweepAgainAt } from '../core/slice.ts';
import {
  bucketOf,
  distinctEntries,
  freshCursor,
  lateEntryBucket,
  overtakenEntries,
  reconcileHorizon,
  scanHorizon,
  WHEEL_BUCKET_MS,
  type PlacedEntry,
  type ScanCursor,
  type WheelEntry,
} from '../core/wheel.ts';
import { Reconciler, type ReconcilerDeps } from './reconciler.ts';
import { sendDelayed, type OutgoingMessage } from './send-delayed.ts';
import { assertSendable, planned, setAside } from './set-aside.ts';

const SWEEP_LIMIT = 200;
const JOB_CONCURRENCY = 8;

/** The reconciler's ports (reconciler.ts), and what only the scan itself needs. */
export interface ScannerDeps extends ReconcilerDeps {
  readonly scannerId: string;
  readonly events: EventSink;
  /** How far ahead occurrences are sent. Must exceed the tick interval. */
  readonly lookaheadMs: number;
}

export interface ScanOptions {
  /** Stop taking up buckets after this instant (the caller re-queues the shard). */
  readonly deadline?: number;
}

export interface ScanReport {
  shard: number;
  /** Buckets of the wheel taken up. */
  buckets: number;
  /** Jobs taken up (once per bucket they were due in). */
  jobsAdvanced: number;
  /** Occurrences sent to the work queue. */
  sent: number;
  missed: number;
  /** Due occurrences the misfire policy did not run (recorded SKIPPED). */
  skipped: number;
  /** Occurrences the reconciler found without a live message and sent again. */
  reconciled: number;
  swept: number;
  /** Inbox entries left for the next scan: an entry this scan placed for them may have been read past (core/wheel.ts). */
  inboxKept: number;
  /** Jobs set aside: their stored row could not be planned or sent (core/set-aside.ts); the scan went on without them. */
  setAside: number;
  errors: number;
  /** True when the deadline or a failure left buckets for later: the caller re-queues the shard. */
  incomplete: boolean;
}

export class Scanner {
  private readonly reconciler: Reconciler;

  constructor(private readonly deps: ScannerDeps) {
    this.reconciler = new Reconciler(deps);
  }

  async scanShard(shard: number, options: ScanOptions = {}): Promise<ScanReport> {
    const { wheel, clock } = this.deps;
    const now = clock.now();
    const report: ScanReport = {
      shard,
      buckets: 0,
      jobsAdvanced: 0,
      sent: 0,
      missed: 0,
      skipped: 0,
      reconciled: 0,
      swept: 0,
      inboxKept: 0,
      setAside: 0,
      errors: 0,
      incomplete: false,
    };
    const horizon = scanHorizon(now, this.deps.lookaheadMs);
    // Claimed before any bucket is read: a scan behind this one that places an entry in the range sees it (core/wheel.ts).
    const cursor = (await wheel.claim(shard, horizon)) ?? (await this.seed(shard, now));
    const pastDeadline = (): boolean => options.deadline !== undefined && clock.now() >= options.deadline;
    let position = Math.min(cursor.scannedThrough, horizon);
    const placed: PlacedEntry[] = [];
    // Per job, the clock of a racing scan this one follows for the rest of the scan (recordRanges).
    const racing = new Map<string, number>();
    let inbox: WheelEntry[] = [];
    try {
      inbox = await this.takeUpInbox(shard, position, now, racing, report, placed);
      while (position < horizon && !pastDeadline()) {
        const bucket = await wheel.nextBucket(shard, position, horizon);
        if (bucket === undefined) position = horizon;
        else {
          placed.push(...(await this.takeUpBucket(shard, bucket, now, racing, report)));
          position = bucket + WHEEL_BUCKET_MS;
        }
      }
    } catch (error) {
      // The buckets from `position` on stay for the next scan (the shard is re-queued): nothing is lost.
      report.errors++;
      this.deps.onError?.(error, `scanning shard ${shard}`);
    }
    report.incomplete = position < horizon;
    // Only buckets an earlier scan took up: one this scan took up late (after an outage, a slow scan) was sent just
    // now, and its messages need the grace to be claimed before a missing slice means a lost message.
    const reconcileTo = Math.min(cursor.scannedThrough, position, reconcileHorizon(now, this.deps.sweepGraceMs));
    const reconciledThrough = await this.reconciler.reconcile(shard, cursor.reconciledThrough, reconcileTo, pastDeadline, report);
    report.swept = await this.sweep(shard, now);
    const moved = await wheel.moveCursor(shard, { scannedThrough: Math.max(position, cursor.scannedThrough), reconciledThrough });
    // Last, and only for a generation whose entries are where every scan will read them: a scanner that dies
    // before this, or an entry another scan may have read past, leaves the inbox entry to the next scan.
    const overtaken = new Set(overtakenEntries(placed, position, moved.claimedThrough).map(generationKey));
    const taken = inbox.filter((entry) => !overtaken.has(generationKey(entry)));
    report.inboxKept = inbox.length - taken.length;
    await mapBounded(taken, JOB_CONCURRENCY, (entry) => wheel.takeFromInbox(shard, entry));
    return report;
  }

  /**
   * A shard no scan has seen (a new installation, or one that kept its jobs
   * through an upgrade): every job of it that runs goes to the inbox, from
   * its stored first occurrence, before the cursor starts at the current bucket.
   */
  private async seed(shard: number, now: number): Promise<ScanCursor> {
    const records = await this.deps.jobs.recordsOfShard(shard);
    await mapBounded(records, JOB_CONCURRENCY, async (record) => {
      const entry = inboxEntryOf(record);
      if (entry) await this.deps.wheel.putInbox(shard, entry);
    });
    return this.deps.wheel.moveCursor(shard, freshCursor(now));
  }

  /**
   * New generations: a job put, resumed or re-added since the last scan. Its
   * occurrences in buckets the scans have passed are sent now, with an entry
   * for the reconciler from the first one sent (in the current bucket at the
   * earliest: `lateEntryBucket`); its next entry goes where the bucket loop
   * takes it up, and into `placed`. @returns the inbox entries taken up (the
   * scan removes them last).
   */
  private async takeUpInbox(
    shard: number,
    scannedThrough: number,
    now: number,
    racing: Map<string, number>,
    report: ScanReport,
    placed: PlacedEntry[],
  ): Promise<WheelEntry[]> {
    const inbox = await this.deps.wheel.inbox(shard);
    if (inbox.length === 0) return [];
    const records = await this.currentRecords(inbox);
    const messages: OutgoingMessage[] = [];
    const late: PlacedEntry[] = [];
    const next: PlacedEntry[] = [];
    for (const entry of inbox) {
      const job = liveJob(records.get(entry.jobId), entry.generation);
      if (job === undefined) continue;
      const jobMessages: OutgoingMessage[] = [];
      const jobLate: PlacedEntry[] = [];
      let from = entry.from;
      try {
        for (let bucket = bucketOfStart(job, from); from < NEVER && bucket < scannedThrough; bucket = bucketOfStart(job, from)) {
          const sentBefore = jobMessages.length;
          from = await this.takeUp(job, from, bucket, now, racing, jobMessages, report);
          const firstSent = jobMessages[sentBefore];
          if (firstSent)
            placeLate(jobLate, {
              jobId: job.id,
              generation: job.generation,
              from: firstSent.scheduledAt,
              bucket: lateEntryBucket(bucket, now),
              sentAt: now,
            });
        }
        if (from < NEVER) next.push({ jobId: job.id, generation: job.generation, from, bucket: bucketOfStart(job, from) });
      } catch (error) {
        // Its messages and entries are dropped with it; the inbox entry is taken up all the same (the record stays).
        await this.setAsideOrThrow(shard, job, from, error, now, report);
        continue;
      }
      messages.push(...jobMessages);
      late.push(...jobLate);
    }
    report.sent += await sendDelayed(this.deps.queue, this.deps.clock, messages);
    await this.deps.wheel.place(shard, [...late, ...next], now);
    placed.push(...next);
    return inbox;
  }

  /** Every job due in `bucket`: its occurrences there sent, its next entry written. @returns the entries placed. */
  private async takeUpBucket(
    shard: number,
    bucket: number,
    now: number,
    racing: Map<string, number>,
    report: ScanReport,
  ): Promise<PlacedEntry[]> {
    // An entry that was sent late (`sentAt`) is there for the reconciler only (`lateEntryBucket`).
    const entries = distinctEntries((await this.deps.wheel.entriesAt(shard, bucket)).filter((entry) => entry.sentAt === undefined));
    const records = await this.currentRecords(entries);
    const messages: OutgoingMessage[] = [];
    const next: PlacedEntry[] = [];
    for (const entry of entries) {
      const job = liveJob(records.get(entry.jobId), entry.generation);
      if (job === undefined) continue;
      try {
        const jobMessages: OutgoingMessage[] = [];
        const from = await this.takeUp(job, entry.from, bucket, now, racing, jobMessages, report);
        if (from < NEVER) next.push({ jobId: job.id, generation: job.generation, from, bucket: bucketOfStart(job, from) });
        messages.push(...jobMessages);
      } catch (error) {
        await this.setAsideOrThrow(shard, job, entry.from, error, now, report);
      }
    }
    report.sent += await sendDelayed(this.deps.queue, this.deps.clock, messages);
    await this.deps.wheel.place(shard, next, now);
    report.buckets++;
    return next;
  }

  /**
   * One job's occurrences from `from` whose start falls before the end of
   * `bucket`, under its catch-up window and misfire policy
   * (core/advance-plan.ts): the ones to run go to `messages`, the ranges it
   * does not run are recorded. All of the row's planning, and the check that
   * SQS takes its message, come before any write. Planned at `now`, or at the
   * clock of a racing scan this one follows for the job (`racing`).
   * @returns its next occurrence (or NEVER).
   * @throws {UnplannableJobError} when the row cannot be planned or sent (nothing written for it).
   */
  private async takeUp(
    job: StoredJob,
    from: number,
    bucket: number,
    now: number,
    racing: Map<string, number>,
    messages: OutgoingMessage[],
    report: ScanReport,
  ): Promise<number> {
    const planNow = racing.get(job.id) ?? now;
    let plan = planned(job.id, () => planBucket(job, from, bucket, planNow));
    const [firstOccurrence] = plan.occurrences;
    if (firstOccurrence !== undefined) assertSendable({ jobId: job.id, scheduledAt: firstOccurrence, generation: job.generation });
    let recorded = plan.first ? await this.recordRanges(job, plan.first, now, report) : {};
    if (recorded.racingNow !== undefined) {
      // Followed for the rest of this scan: a later bucket planned on this scan's own clock would judge the job's next
      // occurrence, which the racing scan sent, missed.
      const racingNow = recorded.racingNow;
      racing.set(job.id, racingNow);
      plan = planned(job.id, () => planBucket(job, from, bucket, racingNow));
      recorded = plan.first ? await this.recordRanges(job, plan.first, now, report) : {};
    }
    const { occurrences, next, offset } = recorded.until === undefined ? plan : afterRecordedRange(job, plan, recorded.until);
    const { startPrecision } = job.policies;
    for (const scheduledAt of occurrences)
      messages.push({ jobId: job.id, scheduledAt, startAt: scheduledAt + offset, generation: job.generation, startPrecision });
    report.jobsAdvanced++;
    return next;
  }

  /** A row that cannot be planned or sent is set aside and the scan goes on; any other error stops the scan. */
  private async setAsideOrThrow(
    shard: number,
    job: StoredJob,
    from: number,
    error: unknown,
    now: number,
    report: ScanReport,
  ): Promise<void> {
    if (!(error instanceof UnplannableJobError)) throw error;
    await setAside(this.deps, shard, job, from, error, now);
    report.setAside++;
    this.deps.onError?.(error, `setting job ${job.id} aside on shard ${shard}`);
  }

  /**
   * Downtime longer than the catch-up window (MISSED) and due occurrences the
   * misfire policy does not run (SKIPPED): one record and one event each. The
   * scan that wrote the record reports it; a racing or redone scan that finds
   * it written does not report it again, and follows it: a racing scan's clock
   * (up to the promised skew ahead) may have ended it later than this plan
   * does, and no occurrence it covers may run. A racing scan's MISSED range with another end means its clock read
   * another catch-up window: this one stops there, to plan again at that scan's `now` (core/bucket-plan.ts,
   * racingScanNow), before it writes a misfire range of its own.
   * @returns the latest end of a range another scan recorded, if any; or the racing scan's `now` to plan again at.
   */
  private async recordRanges(
    job: StoredJob,
    plan: AdvancePlan,
    now: number,
    report: ScanReport,
  ): Promise<{ readonly until?: number; readonly racingNow?: number }> {
    let recordedUntil: number | undefined;
    for (const [range, type] of [
      [plan.missed, 'missed'],
      [plan.skipped, 'skipped'],
    ] as const) {
      if (range === undefined) continue;
      const recorded = await this.deps.slices.recordRange(job.id, definitionOf(job), range, now);
      if (recorded.outcome === 'recorded') {
        const racingNow = type === 'missed' ? racingScanNow(job, range, recorded.until) : undefined;
        if (racingNow !== undefined) return { racingNow };
        recordedUntil = Math.max(recordedUntil ?? recorded.until, recorded.until);
        continue;
      }
      if (type === 'missed') report.missed += range.count;
      else report.skipped += range.count;
      this.deps.events.emit(
        lifecycleEvent(type, { jobId: job.id, scheduledAt: range.from }, now, {
          fence: 0,
          worker: this.deps.scannerId,
          count: range.count,
          until: isoSecond(range.to),
          ...('reason' in range && { reason: range.reason }),
        }),
      );
    }
    return recordedUntil === undefined ? {} : { until: recordedUntil };
  }

  /**
   * The records behind `entries`, read at half price; an entry newer than its
   * record (a change a moment ago that the read did not see yet) is read again consistently.
   */
  private async currentRecords(entries: readonly WheelEntry[]): Promise<Map<string, JobRecord>> {
    const records = await this.deps.jobs.records([...new Set(entries.map((entry) => entry.jobId))], false);
    const behind = entries.filter((entry) => (records.get(entry.jobId)?.generation ?? -1) < entry.generation).map((entry) => entry.jobId);
    if (behind.length > 0) for (const [id, record] of await this.deps.jobs.records([...new Set(behind)], true)) records.set(id, record);
    return records;
  }

  /** Re-sends live slices whose sweep time passed: their message was lost or their worker vanished. */
  private async sweep(shard: number, now: number): Promise<number> {
    const stale = await this.deps.slices.findSweepable(shard, now, SWEEP_LIMIT);
    if (stale.length === 0) return 0;
    await sendDelayed(
      this.deps.queue,
      this.deps.clock,
      stale.map((key) => ({ jobId: key.jobId, scheduledAt: key.scheduledAt })),
    );
    await mapBounded(stale, JOB_CONCURRENCY, (key: SweepCandidate) =>
      this.deps.slices.deferSweep(key, sweepAgainAt(key, now, this.deps.sweepGraceMs)),
    );
    return stale.length;
  }
}

/**
 * The job an entry of `generation` stands for, if that is still its generation and it is in the schedule. A row
 * whose `enabled` is not a boolean is returned too: planning it sets it aside (core/bucket-plan.ts), where taking it
 * for paused would stop it without a word.
 */
function liveJob(record: JobRecord | undefined, generation: number): StoredJob | undefined {
  if (record === undefined || isTombstone(record) || record.generation !== generation) return undefined;
  if (typeof record.enabled !== 'boolean') return record;
  return inDueIndex(record) ? record : undefined;
}

/**
 * Adds the entry of occurrences sent late, unless the job's previous one went
 * to the same bucket (`lateEntryBucket` gathers every bucket before the
 * current one into it): that one covers it, from an earlier occurrence.
 */
function placeLate(placed: PlacedEntry[], entry: PlacedEntry): void {
  const previous = placed.at(-1);
  if (previous?.jobId === entry.jobId && previous.generation === entry.generation && previous.bucket === entry.bucket) return;
  placed.push(entry);
}

/** One generation of one job, as a set key (a shard's inbox holds over a hundred thousand after a million schedules are put). */
function generationKey(entry: WheelEntry): string {
  return `${entry.jobId}\u0000${entry.generation}`;
}

/** The bucket an occurrence of `job` starts in (its jitter offset read from the row). @throws {UnplannableJobError} */
function bucketOfStart(job: StoredJob, scheduledAt: number): number {
  return planned(job.id, () => {
    assertRowShape(job);
    return bucketOf(scheduledAt + jitterOffsetMs(job.id, job.policies.jitterMs));
  });
}
