/**
 * Entries for one SQS batch action (ChangeMessageVisibilityBatch,
 * DeleteMessageBatch), coalesced: the entries added less than a quarter second
 * apart go out together, up to 10 to a request (one billed request). The
 * entries of a Lambda batch, or of messages due in the same second, arrive
 * over tens of milliseconds, so ten of them cost one request instead of ten.
 */
import type { Clock } from '../../core/clock.ts';

/** Entries in one SQS batch request. */
export const MAX_ENTRIES = 10;
/**
 * How long the pending entries wait for one more after the last joined. The claims of one batch return over tens of
 * milliseconds from an idle table and over hundreds from a busy one (the emulator answers them one at a time, with
 * stalls of 200 ms: a fixed 50 ms window sent a 200-slice bench burst's visibility changes about two to a request,
 * 0.58 batch requests per execution).
 */
export const QUIET_MS = 250;
/** The longest the first entry waits, however the others trickle in. */
export const MAX_WAIT_MS = 750;

export class CoalescedEntries<T> {
  private pending: T[] = [];
  /** Aborted to cancel the flush it times. */
  private quietTimer: AbortController | undefined;
  private maxWaitTimer: AbortController | undefined;
  private readonly sending = new Set<Promise<void>>();

  /** `send` gets up to MAX_ENTRIES entries; it reports its own failures and never rejects. */
  constructor(
    private readonly send: (entries: readonly T[]) => Promise<void>,
    /** Whose timers time the flushes. */
    private readonly clock: Clock,
  ) {}

  add(entry: T): void {
    this.pending.push(entry);
    if (this.pending.length >= MAX_ENTRIES) return this.flush();
    this.quietTimer?.abort();
    this.quietTimer = this.flushAfter(QUIET_MS);
    this.maxWaitTimer ??= this.flushAfter(MAX_WAIT_MS);
  }

  /** Sends what is pending now, and resolves once every request sent so far has returned. */
  async settle(): Promise<void> {
    this.flush();
    await Promise.all([...this.sending]);
  }

  /** Drops what is pending without sending it, and resolves once every request sent so far has returned. */
  async discard(): Promise<void> {
    this.clearTimers();
    this.pending = [];
    await Promise.all([...this.sending]);
  }

  private flushAfter(ms: number): AbortController {
    const timer = new AbortController();
    // Checked again once the wait resolved: a timer cleared after it fired must not flush, as a cleared timeout would not.
    void this.clock.sleep(ms, timer.signal).then(
      () => {
        if (!timer.signal.aborted) this.flush();
      },
      () => {},
    );
    return timer;
  }

  private clearTimers(): void {
    this.quietTimer?.abort();
    this.maxWaitTimer?.abort();
    this.quietTimer = undefined;
    this.maxWaitTimer = undefined;
  }

  private flush(): void {
    this.clearTimers();
    while (this.pending.length > 0) {
      const request = this.send(this.pending.splice(0, MAX_ENTRIES)).finally(() => this.sending.delete(request));
      this.sending.add(request);
    }
  }
}
