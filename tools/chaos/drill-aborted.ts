import { CronfenceError } from '../../lib/core/errors.ts';
import type { DrillProgress } from './drill-progress.ts';

/**
 * The drill itself could not go on: one of its own requests (setting up the
 * stores, registering or changing jobs, reading what was stored) failed after
 * all its tries, most often an emulator too loaded to answer within the SDK's
 * timeout. No verdict: nothing was checked. Names the phase and the cause, and
 * where the replicas' log is.
 */
export class DrillAbortedError extends CronfenceError {
  override name = 'DrillAbortedError';
  constructor(
    readonly phase: DrillProgress['phase'],
    readonly replicasLog: string,
    cause: unknown,
  ) {
    super(
      `the drill stopped in its ${phase} phase, without a verdict: its own request failed (${describeCause(cause)}); the replicas' log is ${replicasLog}`,
      { cause },
    );
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const attempts = (cause as { $metadata?: { attempts?: number } }).$metadata?.attempts;
  return `${cause.name}: ${cause.message}${attempts === undefined ? '' : ` after ${attempts} tries`}`;
}
