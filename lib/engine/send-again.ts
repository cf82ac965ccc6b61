/**
 * The engine's one retry layer for its store writes (a commit, a chunk, a DEAD
 * record, a one-time job's delete). Each is idempotent: the store recognises
 * its own earlier try by fence and owner, so a try that landed with its reply
 * lost is reported as done, never written twice. Such a write is sent again
 * while its outcome is unknown (a timeout, a lost reply, once the SDK's own
 * tries are spent) or the store refused it for now (StoreBusyError: throttled,
 * a conflicting transaction), with full-jitter backoff; any other CronfenceError
 * is final. The adapters try once above the SDK and never loop themselves, so a
 * write goes out at most WRITE_TRIES × the SDK's tries.
 */
import { retryDelayMs, type Random } from '../core/backoff.ts';
import type { Clock } from '../core/clock.ts';
import { CronfenceError, StoreBusyError } from '../core/errors.ts';

/** Tries of one write: with the backoff below they fit in a default lease. */
export const WRITE_TRIES = 5;
/** Full jitter from 100 ms, capped at 1 s. */
const WRITE_BACKOFF = { baseMs: 100, maxMs: 1000 };

export interface SendAgainOptions {
  readonly clock: Clock;
  readonly random?: Random;
  /** Aborted: no further try (the attempt lost its lease or timed out). */
  readonly signal?: AbortSignal;
  /** Each failed try that is sent again. */
  readonly onRetry?: (error: unknown) => void;
}

/** A failure after which the same write may be sent again: not applied, or its outcome unknown. */
export function maySendAgain(error: unknown): boolean {
  return !(error instanceof CronfenceError) || error instanceof StoreBusyError;
}

export async function sendAgainWhileUnsure<T>(send: () => Promise<T>, options: SendAgainOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!maySendAgain(error) || attempt >= WRITE_TRIES || options.signal?.aborted) throw error;
      options.onRetry?.(error);
      await options.clock.sleep(retryDelayMs(attempt, WRITE_BACKOFF, options.random));
    }
  }
}
