/**
 * A job change's writes, planned in pure code (docs/architecture.md,
 * "Multi-write operations"); the engine (engine/job-repository.ts) runs the
 * plan over a JobStore (ports.ts), whichever store that is.
 *
 * WRITE   all or nothing (`JobStore.writeChange`):
 *   - the job, on condition that its version is still the one read (absent, for a new id);
 *   - its inbox entry, when the new generation runs (never over a newer generation's);
 *   - a settle record, when the ended generation had occurrences due with no slice:
 *     what settling them needs (its definition, range and reason).
 *   A refused write is a lost race: read again and plan again.
 * SETTLE  then the older generations' pending slices are SKIPPED, and so are the
 *   settle record's occurrences with no slice yet; the settle record goes last. A
 *   call that fails in between leaves it: the next change or retry of the same job
 *   finds it and finishes it first.
 */
import { dueWithoutSlice, inboxEntryOf, type LifecycleChange } from './job-lifecycle.ts';
import { definitionOf, isTombstone, type JobRecord, type SkipReason } from './job-record.ts';
import type { DstPolicy } from './schedule.ts';
import type { SliceDefinition } from './slice.ts';
import type { WheelEntry } from './wheel.ts';

/** What settling an ended generation's due occurrences needs, kept until it is done. */
export interface DueSettle {
  readonly jobId: string;
  readonly shard: number;
  /** The generation the change ended. */
  readonly generation: number;
  readonly reason: SkipReason;
  /** Its due occurrences are those in `[from, to)`. */
  readonly from: number;
  readonly to: number;
  readonly schedule: string;
  readonly timeZone: string;
  readonly dst: DstPolicy;
  /** What each SKIPPED slice is written with (the ended generation's definition). */
  readonly run: SliceDefinition;
}

/** The one all-or-nothing write of a change. */
export interface JobWrite {
  /** The record read: the write is conditioned on its version (on no record, when undefined). */
  readonly previous: JobRecord | undefined;
  readonly next: JobRecord;
  readonly shard: number;
  readonly inbox: WheelEntry | undefined;
  readonly settle: DueSettle | undefined;
}

/**
 * The write of `change` over `previous`. Only a change that ends the generation settles its due occurrences: one
 * that keeps it (resuming a timed pause after its end) must not write SKIPPED over occurrences that generation's
 * messages are about to run.
 */
export function planJobWrite(previous: JobRecord | undefined, change: LifecycleChange, shard: number, now: number): JobWrite {
  const ended = previous !== undefined && previous.generation !== change.next.generation;
  const settle = ended ? dueSettleOf(previous, shard, now, change.settle) : undefined;
  return { previous, next: change.next, shard, inbox: inboxEntryOf(change.next), settle };
}

/** What settling `previous`'s due occurrences needs, if it had any (`dueWithoutSlice`). */
function dueSettleOf(previous: JobRecord, shard: number, now: number, reason: SkipReason): DueSettle | undefined {
  const due = dueWithoutSlice(previous, now);
  if (due === undefined || due.occurrences.length === 0 || isTombstone(previous)) return undefined;
  const { schedule, timeZone, dst } = previous;
  return {
    jobId: previous.id,
    shard,
    generation: previous.generation,
    reason,
    from: due.from,
    to: due.to,
    schedule,
    timeZone,
    dst,
    run: definitionOf(previous),
  };
}

/** The reason to settle with when the stored state already is the one asked for. */
export function settleReasonOf(job: JobRecord): SkipReason {
  if (isTombstone(job)) return 'deleted';
  return job.enabled ? 'superseded' : 'paused';
}
