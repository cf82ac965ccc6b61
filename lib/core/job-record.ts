/**
 * What the jobs table holds: a job (its spec plus the scheduler's
 * bookkeeping) or, once deleted, its tombstone. The vocabulary the lifecycle
 * (job-lifecycle.ts) decides over and the ports (ports.ts) carry, apart from
 * both so neither imports the other.
 */
import type { JobSpec } from './job-spec.ts';
import type { OperatorNote, PauseState } from './operator.ts';
import type { SliceDefinition } from './slice.ts';

/** A job as stored: its spec plus the scheduler's bookkeeping. */
export interface StoredJob extends JobSpec {
  readonly shard: number;
  /**
   * The first occurrence of this generation: at or after the change that made
   * it (or the end of its pause). The wheel, not the job, tracks what has been
   * sent since (core/wheel.ts), so no scan writes the job.
   */
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
  /** Why the change that made this generation skips the older ones' slices that had not started (core/job-lifecycle.ts). */
  readonly changeReason?: SkipReason;
}

/** What a slice of `job`'s current generation is created with. */
export function definitionOf(job: StoredJob): SliceDefinition {
  return { generation: job.generation, handler: job.handler, policies: job.policies, payload: job.payload, shard: job.shard };
}

/**
 * Why a slice was settled SKIPPED without running: a lifecycle change, the
 * job's misfire policy (`misfire`, advance-plan.ts) or its overlap policy
 * (`overlap`: another run was ahead; `replaced`: fenced out by a newer run, overlap-policy.ts).
 */
export type SkipReason = 'paused' | 'disabled' | 'deleted' | 'superseded' | 'misfire' | 'overlap' | 'replaced';

/** What is left of a deleted job: enough to keep its generation and version growing. */
export interface JobTombstone {
  readonly id: string;
  readonly deleted: true;
  readonly generation: number;
  readonly version: number;
  readonly updatedAt: number;
  readonly changeReason?: SkipReason;
}

export type JobRecord = StoredJob | JobTombstone;

export function isTombstone(record: JobRecord | undefined): record is JobTombstone {
  return record !== undefined && 'deleted' in record && record.deleted === true;
}
