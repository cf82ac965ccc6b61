/**
 * Jitter: a job with `jitter: '90s'` starts each occurrence up to 90 s late,
 * by a fixed offset derived from its id, so a midnight with many jobs becomes
 * a ramp across the window instead of one spike, and each job still starts
 * at the same point of its window every time (predictable, and the same on
 * every scanner and worker). The slot keeps its nominal key: the execution
 * key, the slice's `scheduledAt` and every audit keep the nominal second;
 * only when the slice is delivered and started moves.
 */
import { shardOf } from './shard.ts';

/** The job's offset in `[0, jitterMs)`, in ms; 0 without jitter. */
export function jitterOffsetMs(jobId: string, jitterMs: number | undefined): number {
  if (jitterMs === undefined || jitterMs <= 0) return 0;
  // Salted, so the offset does not follow the job's shard (the same hash mod the shard count).
  return shardOf(`${jobId}#jitter`, jitterMs);
}

/** When a slice's run is meant to start: its nominal second plus its job's jitter offset. */
export function startAtOf(slice: {
  readonly jobId: string;
  readonly scheduledAt: number;
  readonly policies: { readonly jitterMs?: number };
}): number {
  return slice.scheduledAt + jitterOffsetMs(slice.jobId, slice.policies.jitterMs);
}
