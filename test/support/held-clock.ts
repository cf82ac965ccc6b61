/**
 * A clock whose timers fire only when the test says: each wait asked of it is recorded, and ends when the test
 * releases it (or rejects when its signal aborts). A wait seen here proves the code asked its clock, not a timer of
 * its own; its `now` stands still.
 */
import type { Clock } from '../../lib/core/clock.ts';

export interface HeldWait {
  readonly ms: number;
  readonly signal?: AbortSignal;
  /** Fires the timer: the sleep resolves, the timeout's signal aborts. */
  release(): void;
}

export class HeldClock implements Clock {
  readonly waits: HeldWait[] = [];

  constructor(private readonly at = 0) {}

  now(): number {
    return this.at;
  }

  elapsed(): number {
    return this.at;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      this.waits.push({ ms, signal, release: resolve });
    });
  }

  timeout(ms: number): AbortSignal {
    const controller = new AbortController();
    this.waits.push({ ms, release: () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')) });
    return controller.signal;
  }
}
