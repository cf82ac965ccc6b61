/**
 * Test fixtures: a stored job and its slices created the way the scanner
 * creates them (through ScheduleStore.advance), never by writing items by hand.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/ports.ts';
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
  const outcome = await installation.runtime.schedules.advance(stored, [{ ...key, sweepAt: scheduledAt + 30_000 }], scheduledAt + 1000, Date.now());
  if (outcome.kind !== 'advanced' || outcome.created.length !== 1) throw new Error(`could not create slice: ${JSON.stringify(outcome)}`);
  return { job: stored, key };
}

/** A whole-second instant `offsetMs` from now. */
export function wholeSecond(offsetMs = 0): number {
  return Math.floor((Date.now() + offsetMs) / 1000) * 1000;
}
