/**
 * Test fixtures: a stored job and its slices created the way the product
 * creates an ENQUEUED slice (SliceStore.enqueue: the reconciler's, an
 * operator's), never by writing items by hand.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import type { SliceKey } from '../../lib/core/slice.ts';
import type { TestInstallation } from './harness.ts';

/** Registers a job and creates one ENQUEUED slice for it at `scheduledAt`. */
export async function enqueuedSlice(
  installation: TestInstallation,
  job: Partial<JobSpecInput> & { id: string },
  scheduledAt: number,
  knownHandlers?: string[],
): Promise<{ job: StoredJob; key: SliceKey }> {
  const repository = installation.runtime.jobs(knownHandlers);
  const { job: stored } = await repository.put({ schedule: '* * * * * *', handler: 'test-handler', ...job });
  const key = { jobId: stored.id, scheduledAt };
  const created = await installation.runtime.slices.enqueue(definitionOf(stored), [{ ...key, sweepAt: scheduledAt + 30_000 }], Date.now());
  if (created.length !== 1) throw new Error(`could not create slice ${JSON.stringify(key)}: one is there already`);
  return { job: stored, key };
}

/** A whole-second instant `offsetMs` from now. */
export function wholeSecond(offsetMs = 0): number {
  return Math.floor((Date.now() + offsetMs) / 1000) * 1000;
}
