/**
 * Keeps a received message hidden while slow work on it is under way. The
 * queue's short visibility timeout is the failover timer, so when a store
 * request is slow (a saturated table, a throttled partition) the message
 * would surface and a standby would take over a live holder, adding load
 * exactly when there is least to spare. The first extension is sent only
 * once `everyMs` has passed: fast work costs no request. The work's result is
 * returned as soon as the work ends, not after an extension still in flight:
 * a slow extension (the SDK tries a timed-out request three times, 3 s each) held a won
 * claim back that long, and with it the holder's first renewal (a LocalStack
 * drill: a standby's claim landed at once and its slice started 10 s later).
 */
import type { Clock } from '../core/clock.ts';

export interface Hideable {
  hide(receiptHandle: string, seconds: number): Promise<void>;
}

export interface KeepHiddenOptions {
  /** Whose timers pace the extensions. */
  readonly clock: Clock;
  readonly everyMs: number;
  readonly visibilitySeconds: number;
  /** A failed extension is reported and retried at the next beat; the work goes on. */
  readonly onError?: (error: unknown) => void;
}

export async function keepHidden<T>(
  queue: Hideable,
  receiptHandle: string,
  options: KeepHiddenOptions,
  work: () => Promise<T>,
): Promise<T> {
  const stop = new AbortController();
  const beat = (async () => {
    for (;;) {
      try {
        await options.clock.sleep(options.everyMs, stop.signal);
      } catch {
        return;
      }
      try {
        await queue.hide(receiptHandle, options.visibilitySeconds);
      } catch (error) {
        if (!stop.signal.aborted) options.onError?.(error);
      }
    }
  })();
  try {
    return await work();
  } finally {
    // An extension still in flight lands or fails on its own; it is not awaited (see above), and `beat` never rejects.
    stop.abort();
    void beat;
  }
}
