/**
 * Time for the engine: the instant (`now`), a reading for durations that never
 * steps (`elapsed`), and the timers (`sleep`, `timeout`).
 * Every rule that compares instants reads `now`, and every wait goes through
 * `sleep` or `timeout`, never `Date.now()`, `setTimeout` or `AbortSignal.timeout`
 * inline: tests step time (backwards too), the chaos drill gives each process
 * a skewed clock, and the simulator runs the engine in virtual time.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Milliseconds from an arbitrary origin on a reading that never steps (NTP may step `now` back or forth): for how
   * long something has lasted, never for an instant. A message's hold counts its hide on it.
   */
  elapsed(): number;
  /** Resolves once `ms` have passed on this clock's timers, or rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A signal that aborts with a `TimeoutError` once `ms` have passed on this clock's timers. */
  timeout(ms: number): AbortSignal;
}

/** Resolves after `ms` of real time, or rejects when `signal` aborts. */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/** Host time and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  elapsed: () => performance.now(),
  sleep: realSleep,
  timeout: (ms) => AbortSignal.timeout(Math.max(0, Math.ceil(ms))),
};

/**
 * A clock whose `now` only moves when told to; for pure unit tests of rules that read the instant. Its timers
 * are real ones: a wait under it takes real time. To run code that waits in virtual time, use the simulator's
 * VirtualClock (cronfence/testing).
 */
export class ManualClock implements Clock {
  /** The instant it started at, plus how far it has moved forward since: `set` back steps it, as NTP would, and leaves this. */
  private advanced: number;

  constructor(private current: number) {
    this.advanced = current;
  }

  now(): number {
    return this.current;
  }

  elapsed(): number {
    return this.advanced;
  }

  set(epochMs: number): void {
    this.advanced += Math.max(0, epochMs - this.current);
    this.current = epochMs;
  }

  advance(ms: number): void {
    this.current += ms;
    this.advanced += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return realSleep(ms, signal);
  }

  timeout(ms: number): AbortSignal {
    return systemClock.timeout(ms);
  }
}

/** Another clock shifted by a fixed offset, sharing its timers; models a skewed host. */
export class OffsetClock implements Clock {
  constructor(
    private readonly offsetMs: number,
    private readonly base: Clock = systemClock,
  ) {}

  now(): number {
    return this.base.now() + this.offsetMs;
  }

  elapsed(): number {
    return this.base.elapsed();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.base.sleep(ms, signal);
  }

  timeout(ms: number): AbortSignal {
    return this.base.timeout(ms);
  }
}

/**
 * Resolves once `clock` reads `at` or later, or rejects when `signal` aborts.
 * A timer can fire a millisecond before the clock says its time came (and a
 * skewed clock can be stepped while it waits), so it sleeps again until the
 * clock agrees: a slice's handler never starts before its second.
 */
export async function sleepUntil(clock: Clock, at: number, signal?: AbortSignal): Promise<void> {
  for (let left = at - clock.now(); left > 0; left = at - clock.now()) await clock.sleep(Math.max(1, left), signal);
  if (signal?.aborted) throw signal.reason;
}
