/**
 * A received message's visibility, as far as its receiver can count on it:
 * hidden since the last hide SQS accepted (at first, its receive), for that
 * hide's timeout. Until then the receipt holds the message; after, another
 * consumer may have received it, and a visibility change sent with this
 * receipt would hide *their* copy (a stale receipt handle is not promised to
 * be refused: the emulator and the in-memory queue apply it). So every change
 * goes through here: sent only while the receipt still holds the message with
 * a margin, and abandoned (aborted, not retried) if it has not landed by
 * then. A change hung in the SDK's retries then never lands seconds later
 * under a standby, delaying a takeover or surfacing the standby's copy under
 * its live holder (docs/chaos.md, "Found by the simulation").
 */
import type { Clock } from '../core/clock.ts';
import type { WorkQueue } from '../core/ports.ts';

/** Where a hold sends its changes: the work queue, or the scan queue (which shares no request: `batched` goes alone). */
export type VisibilityQueue = Pick<WorkQueue, 'hide'> & Partial<Pick<WorkQueue, 'hideBatched'>>;

/** The pace of `keepHiddenWhile`: a change of `seconds` every `everyMs`, a failed one reported and left to the next. */
export interface KeepHiddenPace {
  readonly everyMs: number;
  readonly seconds: number;
  readonly onError?: (error: unknown) => void;
}

/**
 * How long before the computed surfacing a change is no longer sent (the receive's reply transit, SQS's own timing):
 * half a heartbeat, a sixth of the visibility (a job's visibility is its lease less a heartbeat, three heartbeats by
 * default: core/slice.ts), at most half a second.
 */
const MAX_SURFACE_MARGIN_MS = 500;

export class MessageHold {
  /**
   * When the last accepted hide was sent (at first, the receive), on the clock's `elapsed` reading: a step of the
   * worker's wall clock (NTP) must not move the count, or the hold would trust a hide by the size of the step.
   */
  private lastHiddenAt: number;
  private hiddenForMs: number;
  /** No hide was sent or landed past the receipt's lapse: the message has been hidden throughout, by this count. */
  private unbroken = true;

  constructor(
    private readonly queue: VisibilityQueue,
    private readonly clock: Clock,
    readonly receiptHandle: string,
    /**
     * Since when SQS has hidden it at the earliest, by this clock, where its event source says (the local poller's:
     * a reply read late has less visibility left than the receiver's start suggests); undefined: from now.
     */
    hiddenSince: number | undefined,
    /** The visibility timeout the receive hid it for. */
    visibilityMs: number,
  ) {
    const now = clock.now();
    this.lastHiddenAt = clock.elapsed() - (now - Math.min(now, hiddenSince ?? now));
    this.hiddenForMs = visibilityMs;
  }

  /** When the last accepted hide was sent, as a mark comparable only with other marks and the clock's `elapsed`. */
  get hiddenMark(): number {
    return this.lastHiddenAt;
  }

  /** How long since the last accepted hide was sent (at first, the receive). */
  msSinceHidden(): number {
    return this.clock.elapsed() - this.lastHiddenAt;
  }

  /** How long until the message surfaces unless hidden again (negative: it may have surfaced already). */
  msUntilSurfacing(): number {
    return this.surfacesAtMark - this.clock.elapsed();
  }

  /** When the message surfaces unless hidden again, on this worker's clock as it reads now. */
  get surfacesAt(): number {
    return this.clock.now() + this.msUntilSurfacing();
  }

  /** Could the message have surfaced by now, give or take the margin: is the receipt no longer ours to use? */
  lapsed(): boolean {
    return this.clock.elapsed() >= this.lapsesAt;
  }

  /**
   * Has the message stayed hidden since the receive, by this worker's count, and is it still: no moment when it could
   * have surfaced, so no later delivery of it can exist?
   */
  heldThroughout(): boolean {
    return this.unbroken && !this.lapsed();
  }

  private get surfacesAtMark(): number {
    return this.lastHiddenAt + this.hiddenForMs;
  }

  /** When the receipt stops being used: the margin before the message could surface. */
  private get lapsesAt(): number {
    return this.surfacesAtMark - Math.min(MAX_SURFACE_MARGIN_MS, this.hiddenForMs / 6);
  }

  /**
   * Hides the message for `seconds` from the change's arrival. `batched`: shares a request with its batch's changes
   * (WorkQueue.hideBatched). `leaseHeldUntil` (on the clock's `elapsed` reading): a renewal of this worker's lease has
   * just held, so until then the message is this worker's to keep hidden whatever its receipt's age (a standby given
   * it meanwhile was refused the claim); a change not landed by then is abandoned like one past its receipt's lapse (a
   * try retried after a pause landed on a standby's copy: sim aws seed 64).
   * @returns false when the receipt had lapsed and nothing was sent.
   * @throws the queue's error, or the abort's reason when the receipt lapsed (or the lease) before the change landed.
   */
  async hide(seconds: number, options: { readonly batched?: boolean; readonly leaseHeldUntil?: number } = {}): Promise<boolean> {
    const sentAt = this.clock.elapsed();
    const heldUntil = options.leaseHeldUntil ?? this.lapsesAt;
    if (sentAt >= heldUntil) return false;
    if (sentAt >= this.lapsesAt) this.unbroken = false;
    const lapses = this.clock.timeout(heldUntil - sentAt);
    await (options.batched && this.queue.hideBatched
      ? this.queue.hideBatched(this.receiptHandle, seconds, lapses)
      : this.queue.hide(this.receiptHandle, seconds, lapses));
    // Landed after the message could have surfaced (a change the lease let outlive the receipt): another may have it.
    if (this.clock.elapsed() >= this.lapsesAt) this.unbroken = false;
    // Of two changes in flight, the one sent last is counted (SQS's order of arrival is not known here).
    if (sentAt >= this.lastHiddenAt) {
      this.lastHiddenAt = sentAt;
      this.hiddenForMs = Math.max(0, seconds) * 1000;
    }
    return true;
  }

  /**
   * Runs `work` (a claim, a gate, a scan) with the message kept hidden while it is slow: a short visibility is the
   * failover timer, and a slow store request must not hand the message to a standby under a live receiver. The first
   * change goes only after `everyMs` (fast work costs no request), and none once the receipt has lapsed (another
   * may hold the message). The work's result comes back when the work ends, not after a change still in flight: that
   * change lands or is abandoned at the receipt's lapse on its own (docs/chaos.md: a won claim held back 10 s).
   */
  async keepHiddenWhile<T>(work: () => Promise<T>, pace: KeepHiddenPace): Promise<T> {
    const done = new AbortController();
    const beats = (async () => {
      for (;;) {
        try {
          await this.clock.sleep(pace.everyMs, done.signal);
        } catch {
          return;
        }
        try {
          if (!(await this.hide(pace.seconds))) return;
        } catch (error) {
          if (!done.signal.aborted) pace.onError?.(error);
        }
      }
    })();
    try {
      return await work();
    } finally {
      done.abort();
      void beats; // never rejects, and is not waited for (above)
    }
  }
}
