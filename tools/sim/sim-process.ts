/**
 * One simulated process (a scanner, a worker, the tick): its own clock, skewed
 * from true time and steppable, and its life. A paused process runs nothing:
 * its timers and replies wait for its resume; a killed one never runs again
 * (its pending work is simply never resumed, as a killed Lambda's is not).
 * Requests it had already sent still land: the network does not know it died.
 */
import type { Clock } from '../../lib/core/clock.ts';
import type { VirtualClock } from './virtual-clock.ts';

/** The most a process's clock is off true time (the skew the product is specified for). */
export const MAX_SKEW_MS = 2000;

export type ProcessRole = 'scanner' | 'worker' | 'dispatcher';

export class SimProcess implements Clock {
  private offset: number;
  private resumed: Promise<void> | undefined;
  private resume: (() => void) | undefined;
  private dead = false;

  constructor(
    readonly id: string,
    readonly role: ProcessRole,
    private readonly time: VirtualClock,
    offsetMs: number,
  ) {
    this.offset = offsetMs;
  }

  get offsetMs(): number {
    return this.offset;
  }

  get alive(): boolean {
    return !this.dead;
  }

  get paused(): boolean {
    return this.resume !== undefined;
  }

  now(): number {
    return this.time.now() + this.offset;
  }

  /** True time: a step moves `now` only. */
  elapsed(): number {
    return this.time.now();
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    await this.time.sleep(ms, signal);
    await this.gate();
  }

  timeout(ms: number): AbortSignal {
    return this.time.timeout(ms);
  }

  /** Resolves while the process may run: at once when running, at its resume when paused, never once killed. */
  async gate(): Promise<void> {
    if (this.resumed) await this.resumed;
    // A promise of its own, never settled: a shared one would hold every dead process's continuation forever.
    if (this.dead) await new Promise<never>(() => {});
  }

  /** Steps this process's clock by `deltaMs` (negative: backwards, as an NTP correction does), within ±`MAX_SKEW_MS` of true time. */
  step(deltaMs: number): void {
    this.offset = Math.max(-MAX_SKEW_MS, Math.min(MAX_SKEW_MS, this.offset + deltaMs));
  }

  pause(forMs: number): void {
    if (this.dead || this.paused) return;
    this.resumed = new Promise((resolve) => (this.resume = resolve));
    void this.time.sleep(forMs).then(() => {
      const resume = this.resume;
      this.resume = undefined;
      this.resumed = undefined;
      resume?.();
    });
  }

  kill(): void {
    this.dead = true;
  }
}
