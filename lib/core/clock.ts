/**
 * Time source for the engine. Every rule that compares instants reads this,
 * never `Date.now()` inline, so tests can step time (backwards too) and the
 * chaos drill can give each process a skewed clock.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for pure unit tests. */
export class ManualClock implements Clock {
  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  set(epochMs: number): void {
    this.current = epochMs;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/** The system clock shifted by a fixed offset; models a skewed host. */
export class OffsetClock implements Clock {
  constructor(
    private readonly offsetMs: number,
    private readonly base: Clock = systemClock,
  ) {}

  now(): number {
    return this.base.now() + this.offsetMs;
  }
}

/** Resolves after `ms` of real time, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves once `clock` reads `at` or later, or rejects when `signal` aborts.
 * A timer can fire a millisecond before the clock says its time came (and an
 * injected clock need not run at the timer's pace), so it sleeps again until
 * the clock agrees: a slice's handler never starts before its second.
 */
export async function sleepUntil(clock: Clock, at: number, signal?: AbortSignal): Promise<void> {
  for (let left = at - clock.now(); left > 0; left = at - clock.now()) await sleep(Math.max(1, left), signal);
  if (signal?.aborted) throw signal.reason;
}
