/**
 * Setting a job aside (core/set-aside.ts): what a scan does with a job whose
 * stored row cannot be planned or sent, so that it stops that job alone.
 * Only the pure work on a row (its schedule, zone, policies, its message's
 * body) is judged here: a store or queue error is not the row's fault and
 * still stops the scan, which leaves its range to the next one.
 */
import { UnplannableJobError } from '../core/errors.ts';
import { lifecycleEvent, type EventSink } from '../core/events.ts';
import { encodeWorkMessage, type WorkOrder } from '../core/messages.ts';
import type { WheelStore } from '../core/ports.ts';
import { NEVER } from '../core/advance-plan.ts';
import { sqsBodyProblem } from '../core/sqs-body.ts';

/**
 * Runs pure planning over one job's row. @throws {UnplannableJobError} for
 * any exception it raises (a cron that no longer parses, a missing field).
 */
export function planned<T>(jobId: string, plan: () => T): T {
  try {
    return plan();
  } catch (error) {
    if (error instanceof UnplannableJobError) throw error;
    throw new UnplannableJobError(jobId, error instanceof Error ? error.message : String(error), { cause: error });
  }
}

/** @throws {UnplannableJobError} when SQS would refuse the message (a character outside its ranges, over 256 KiB). */
export function assertSendable(order: WorkOrder): void {
  const problem = sqsBodyProblem(encodeWorkMessage(order));
  if (problem !== undefined) throw new UnplannableJobError(order.jobId, `its work message ${problem}`);
}

export interface SetAsideDeps {
  readonly wheel: WheelStore;
  readonly events: EventSink;
  readonly scannerId: string;
}

/** Records the job's generation as set aside on its shard's wheel and emits `set_aside`. */
export async function setAside(
  deps: SetAsideDeps,
  shard: number,
  job: { id: string; generation: number },
  from: number,
  error: UnplannableJobError,
  now: number,
): Promise<void> {
  const firstNotSent = Number.isSafeInteger(from) && from >= 0 && from < NEVER ? from : now;
  await deps.wheel.setAside(shard, {
    jobId: job.id,
    generation: job.generation,
    reason: error.reason,
    from: firstNotSent,
    at: now,
    by: deps.scannerId,
  });
  deps.events.emit(
    lifecycleEvent('set_aside', { jobId: job.id, scheduledAt: firstNotSent }, now, {
      fence: 0,
      worker: deps.scannerId,
      reason: error.reason,
    }),
  );
}
