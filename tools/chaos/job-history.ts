/**
 * Each drill job's recorded history: every change of its definition, with
 * the instant it took effect (the repository's own `now` for the change, read
 * back from the stored item: StoredJob.updatedAt, or the tombstone's). The
 * checker expects an occurrence only while the definition that has it is
 * live, from the change that made it live to the next one.
 */
import { isTombstone, type JobRecord, type SkipReason } from '../../lib/core/job-record.ts';
import type { DstPolicy } from '../../lib/core/schedule.ts';

/**
 * What the drill did to a job. `poison`: a bad row written under the job
 * (poison-faults.ts), no new generation, no definition the engine can run
 * until `repair` (a put of its good definition) gives it a new one.
 */
export type JobChangeKind =
  'create' | 'pause' | 'resume' | 'schedule' | 'payload' | 'disable' | 'enable' | 'delete' | 'readd' | 'poison' | 'repair';

export interface JobDefinition {
  readonly schedule: string;
  readonly timeZone: string;
  /** @default the default DST policy (scheduleOf) */
  readonly dst?: DstPolicy;
  readonly enabled: boolean;
}

export interface JobChange {
  readonly kind: JobChangeKind;
  /** When the change took effect, by the drill's (the repository's) clock. */
  readonly at: number;
  readonly generation: number;
  /** The definition live from `at` on; undefined once deleted, or while poisoned. */
  readonly definition?: JobDefinition;
}

export interface JobHistory {
  readonly jobId: string;
  /** Oldest first; the first is the job's creation. */
  readonly changes: readonly JobChange[];
}

/** The reason a change settles the previous definition's pending slices with (core/job-lifecycle.ts). */
export function skipReasonOf(kind: JobChangeKind): SkipReason {
  switch (kind) {
    case 'pause':
      return 'paused';
    case 'disable':
      return 'disabled';
    case 'delete':
      return 'deleted';
    default:
      return 'superseded';
  }
}

/** The histories of a drill's jobs, built from the records the repository stored. */
export class JobHistoryBook {
  private readonly changes = new Map<string, JobChange[]>();

  /**
   * Records the stored record as a change of `kind` if its generation is new
   * (a failed call may still have written; a call that wrote nothing is not
   * a change). @returns whether it was recorded.
   */
  record(kind: JobChangeKind, record: JobRecord | undefined): boolean {
    if (!record) return false;
    const jobId = record.id;
    const list = this.changes.get(jobId) ?? [];
    if ((list.at(-1)?.generation ?? 0) >= record.generation) return false;
    const definition = isTombstone(record)
      ? undefined
      : { schedule: record.schedule, timeZone: record.timeZone, dst: record.dst, enabled: record.enabled };
    list.push({ kind, at: record.updatedAt, generation: record.generation, definition });
    this.changes.set(jobId, list);
    return true;
  }

  /**
   * Records a bad row written under the job at `at`: its generation stays,
   * and no occurrence is expected of it until the next change (the repair).
   * @returns whether it was recorded (the job has a live definition).
   */
  poisoned(jobId: string, at: number): boolean {
    const list = this.changes.get(jobId);
    const last = list?.at(-1);
    if (!list || !last?.definition) return false;
    list.push({ kind: 'poison', at, generation: last.generation });
    return true;
  }

  /** The definition live now, or undefined for a deleted, poisoned (or unknown) job. */
  current(jobId: string): JobChange | undefined {
    return this.changes.get(jobId)?.at(-1);
  }

  histories(): JobHistory[] {
    return [...this.changes].map(([jobId, changes]) => ({ jobId, changes }));
  }

  /** Changes after the first (the creation). */
  count(): number {
    return [...this.changes.values()].reduce((sum, list) => sum + list.length - 1, 0);
  }
}
