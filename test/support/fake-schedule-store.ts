/**
 * The smallest fakes of the scanner's ports, for pure Scanner tests with a
 * manual clock: jobs due while `nextFireAt < until`, an advance fenced on the
 * version like the real one (test/contract checks the real stores agree), and
 * optional latency that moves the manual clock, as a slow store would.
 */
import type { ManualClock } from '../../lib/core/clock.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { AdvanceOutcome, NewSlice, ScheduleStore, SliceStore, StoredJob, WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import { DEFAULT_DST_POLICY, type DstPolicy } from '../../lib/core/schedule.ts';

export class FakeScheduleStore implements ScheduleStore {
  readonly created: number[] = [];
  readonly jobs = new Map<string, StoredJob>();
  /** Answers each advance with this instead, when set (a lost race, a busy store). */
  answer: ((job: StoredJob) => Promise<AdvanceOutcome> | undefined) | undefined;

  constructor(
    jobs: readonly StoredJob[],
    private readonly latency?: { clock: ManualClock; advanceMs: number },
  ) {
    for (const job of jobs) this.jobs.set(job.id, job);
  }

  /** The one job of a one-job store. */
  get job(): StoredJob {
    return [...this.jobs.values()][0] as StoredJob;
  }

  async queryDue(_shard: number, untilMs: number, limit: number): Promise<StoredJob[]> {
    return [...this.jobs.values()]
      .filter((job) => job.enabled && job.nextFireAt < untilMs)
      .sort((a, b) => a.nextFireAt - b.nextFireAt)
      .slice(0, limit);
  }

  async advance(job: StoredJob, slices: readonly NewSlice[], nextFireAt: number): Promise<AdvanceOutcome> {
    this.latency?.clock.advance(this.latency.advanceMs);
    const answered = this.answer?.(job);
    if (answered) return answered;
    const stored = this.jobs.get(job.id);
    if (!stored || job.version !== stored.version) return { kind: 'conflict', alreadyCreated: [] };
    this.created.push(...slices.map((slice) => slice.scheduledAt));
    this.jobs.set(job.id, { ...stored, nextFireAt, version: stored.version + 1 });
    return { kind: 'advanced', created: slices.map(({ jobId, scheduledAt }) => ({ jobId, scheduledAt })) };
  }
}

export const noSweeps = { findSweepable: async () => [], findCreatedByScan: async () => [], deferSweep: async () => {} } as unknown as SliceStore;

/** A queue that records what was sent, and at what time by `clock`. */
export function recordingQueue(sent: WorkMessage[], clock?: ManualClock, sentAt: number[] = []): WorkQueue {
  return {
    send: async (messages) => {
      sent.push(...messages);
      sentAt.push(...messages.map(() => clock?.now() ?? 0));
    },
    hide: async () => {},
    hideBatched: async () => {},
  };
}

export function fakeJob(spec: { id?: string; cron: string; timeZone?: string; dst?: DstPolicy }, nextFireAt: number): StoredJob {
  return {
    id: spec.id ?? 'job',
    schedule: spec.cron,
    timeZone: spec.timeZone ?? 'UTC',
    dst: spec.dst ?? DEFAULT_DST_POLICY,
    handler: 'noop',
    enabled: true,
    policies: DEFAULT_POLICIES,
    shard: 0,
    nextFireAt,
    version: 1,
    generation: 1,
    createdAt: 0,
    updatedAt: 0,
  };
}
