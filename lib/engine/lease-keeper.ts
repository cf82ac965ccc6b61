/**
 * The lease of one claimed slice, from the claim to the attempt's end: every
 * `heartbeatMs` a renewal on the fence, then an extension of the message's
 * visibility (through its MessageHold). Two timers let a standby in, and this
 * keeper is what keeps them apart from a live holder:
 *
 *   receive   claim   renew        renew        renew        (holder dies)
 *      |--------|-------|------------|------------|---------x
 *                        \ extend     \ extend     \ extend
 *   message:              [hidden for the visibility, lease − heartbeat (3 s)] surfaces → a standby receives it
 *   lease:          [lease (4 s) from each renewal ..............................] + skew margin (4 s) → anyone
 *
 * The takeover on the holder's message back (`isClaimable`) is in one of two states, and each change rides on a
 * renewal (`MessageBackChange`), so the row always says which one a standby meets (the transitions below are pure
 * functions in core/message-back.ts):
 *
 *   ARMED     The row names the message: its coming back admits a standby. Failover after the last extension:
 *             the visibility, a receive and a claim (about 3-3.5 s).
 *   DISARMED  The row names none: only the lease's end plus the skew margin does (about 8-9 s after the last renewal).
 *
 *   ARMED → DISARMED   the message could surface before the next renewal lands (no extension accepted for
 *                      visibility − heartbeat), an extension was refused, an extension landed after the receipt
 *                      lapsed (it may have surfaced meanwhile: MessageHold.heldThroughout), or the claim came back when
 *                      the message may already have surfaced (`overtakeable`): a standby given it must not take over
 *                      a live holder.
 *   DISARMED → ARMED   the message has been hidden throughout since the receive (MessageHold.heldThroughout) and stays
 *                      so past the next renewal: no later delivery of it exists, so its coming back again means
 *                      this holder's heartbeats stopped.
 *   → UNKNOWN          a renewal carrying a change failed with its outcome unknown (timed out, its reply lost): the row
 *                      may say either. The next renewal re-arms if DISARMED → ARMED holds, and disarms otherwise.
 *   → LOST             a renewal refused (the fence moved on), or none answered before the lease ran out: `signal`
 *                      aborts with a LeaseLostError and the keeper stops.
 *   → STOPPED          `stop()`: the attempt ended; nothing waits for a request still in flight.
 *
 * Extensions: one after each renewal that held (never before: a zombie's would hide its standby's copy), in the
 * background; a second beside one still unanswered, and one early while a renewal is slow, each only while the
 * message cannot have surfaced. docs/architecture.md ("The lease") gives the design in a page.
 */
import type { Clock } from '../core/clock.ts';
import { CronfenceError, LeaseLostError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { messageBackChange, takeoverAfter, type MessageBackChange, type Takeover } from '../core/message-back.ts';
import type { SliceStore } from '../core/ports.ts';
import type { SliceKey } from '../core/slice.ts';
import type { MessageHold } from './message-hold.ts';

export interface LeaseKeeperOptions {
  readonly key: SliceKey;
  readonly fence: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** The claimed slice's message: every extension goes through it, and it says when the message could surface. */
  readonly hold: MessageHold;
  /** What each heartbeat sets the message's visibility timeout to (see `messageVisibilitySeconds`). */
  readonly visibilitySeconds: number;
  /** When the claim that set the lease was sent, on the clock's `elapsed` reading (every duration here is). */
  readonly claimedAt: number;
  /**
   * The claim returned when its message may already have surfaced again: a standby given it may claim on the
   * holder's-message-back rule before this lease is renewed. The first renewal is sent at once and disarms that rule.
   */
  readonly overtakeable?: boolean;
  /** The message the lease was claimed with (the slice's `leaseMessageId`): a re-arming renewal names it again. */
  readonly messageId?: string;
}

export class LeaseKeeper {
  private readonly controller = new AbortController();
  private readonly stopped = new AbortController();
  /** When the last renewal that held was sent (at first, the claim), on the clock's `elapsed` reading. */
  private lastRenewedAt: number;
  /** Extensions sent and not yet answered: one at a time, and a second beside one that hangs (`awaitExtensionInFlight`). */
  private readonly extensions = new Set<Promise<void>>();
  /** The holder's-message-back takeover, as the last renewal that changed it left the row (header). */
  private takeover: Takeover = 'armed';
  /** An extension was refused: the next renewal disarms, whatever `mayBeVisible` says. */
  private disarmNow = false;
  /** The change the renewal in flight carries: a refusal while it re-arms must still disarm after it. */
  private changing: MessageBackChange | undefined;
  private loop: Promise<void> | undefined;
  /** Aborted to send the next renewal now rather than after the heartbeat's wait (an extension SQS refused). */
  private wake = new AbortController();
  private confirm: { resolve: () => void; promise: Promise<void> } | undefined;

  constructor(
    private readonly slices: SliceStore,
    private readonly clock: Clock,
    private readonly options: LeaseKeeperOptions,
    private readonly onRenewError: (error: unknown) => void = () => {},
  ) {
    this.lastRenewedAt = options.claimedAt;
  }

  /** Aborts when the lease is lost. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get lost(): boolean {
    return this.controller.signal.aborted;
  }

  /** Resolves once a renewal held (never, if the lease is lost first: race it against `signal`). */
  get confirmed(): Promise<void> {
    if (!this.confirm) {
      let resolve = (): void => {};
      const promise = new Promise<void>((settle) => (resolve = settle));
      this.confirm = { resolve, promise };
      if (this.lastRenewedAt > this.options.claimedAt) resolve();
    }
    return this.confirm.promise;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { key, fence, leaseMs, heartbeatMs } = this.options;
    // The lease was set when the claim was sent: after a slow claim, the first renewal is due sooner (at once, if
    // the claim took a whole heartbeat), or a lease born nearly expired would lapse before it.
    let wait = this.options.overtakeable ? 0 : Math.max(0, heartbeatMs - (this.clock.elapsed() - this.options.claimedAt));
    // A receive read late counts as hidden since its try's send: its first renewal could find the message about to
    // surface and disarm. Extended now, while the receipt holds it, that renewal need not.
    if (this.mayBeVisible(wait)) this.extendVisibility(true);
    while (!this.stopped.signal.aborted && !this.lost) {
      try {
        await this.clock.sleep(wait, AbortSignal.any([this.stopped.signal, this.wake.signal]));
      } catch {
        if (this.stopped.signal.aborted) return;
      }
      wait = heartbeatMs;
      this.wake = new AbortController();
      const now = this.clock.now();
      const sentAt = this.clock.elapsed();
      try {
        await this.renewWithinLease(now);
        // Stopped while it was in flight: whether it landed is unknown and no longer matters; report no renewal.
        if (this.stopped.signal.aborted) return;
        this.lastRenewedAt = sentAt;
        this.confirm?.resolve();
        // After the renewal held, as a rule: a zombie's hide would keep the message (which its standby may now hold
        // too) hidden for another visibility timeout after the standby itself dies (seen: 5.2 s failovers). Only a
        // renewal too slow for that rule extends it sooner as well (renewWithinLease).
        // In the background: a slow or refused extension must not delay the next renewal. One still unanswered since the
        // last heartbeat (hung) gets a second beside it while the message cannot have surfaced: held back until the
        // next heartbeat, a hung extension let the message surface under this live holder (sim loaded seed 1010).
        this.extendVisibility(this.extensions.size > 0);
      } catch (error) {
        if (error instanceof LeaseLostError) {
          this.controller.abort(error);
          return;
        }
        if (!(error instanceof LeaseRanOutError)) this.onRenewError(error);
        // Unsure whether we still hold it: once the lease we last saw renewed has run out, assume not.
        if (error instanceof LeaseRanOutError || this.clock.elapsed() >= this.lastRenewedAt + leaseMs) {
          this.controller.abort(new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence, { cause: error }));
          return;
        }
      }
    }
  }

  /** Could the message surface within a heartbeat of the renewal `inMs` from now: is the last extension SQS accepted that old? */
  private mayBeVisible(inMs = 0): boolean {
    return this.options.hold.msUntilSurfacing() - inMs < this.options.heartbeatMs;
  }

  /**
   * A slow extension still in flight keeps the message hidden once it lands: wait for it while there is still time
   * to disarm after it (until half a heartbeat before the message could surface), so a slow but successful
   * extension does not disarm the fast takeover (a drill saw an 8-9 s failover after such a disarm). Meanwhile a
   * second extension goes out beside it, while the message cannot have surfaced yet: whichever lands first keeps this
   * holder: waited for alone, a hung extension would leave the disarm half a heartbeat (docs/chaos.md, incidents).
   */
  private async awaitExtensionInFlight(): Promise<void> {
    if (this.extensions.size === 0) return;
    const hiddenMark = this.options.hold.hiddenMark;
    this.extendVisibility(true);
    const budget = new AbortController();
    let timedOut = false;
    const timeUp = this.clock.sleep(this.options.hold.msUntilSurfacing() - this.options.heartbeatMs / 2, budget.signal).then(
      () => void (timedOut = true),
      () => {},
    );
    try {
      while (!timedOut && !this.disarmNow && this.extensions.size > 0 && this.options.hold.hiddenMark === hiddenMark)
        await Promise.race([...this.extensions, timeUp]);
    } finally {
      budget.abort();
    }
  }

  /**
   * One extension at a time, or a second `beside` one still in flight (`beside`: out of the heartbeat's rhythm, only
   * while the message cannot have surfaced); its send time counts once SQS accepted it. Its own send time, not the
   * renewal's before it: counted from the renewal, a renewal slower than a heartbeat (a loaded table) made the next
   * one disarm the fast takeover with the message hidden for seconds more, and a kill then took 9.8 s to fail over
   * (a drill).
   */
  private extendVisibility(beside = false): void {
    if (this.extensions.size > (beside ? 1 : 0) || this.stopped.signal.aborted) return;
    // Sent outside the heartbeat's own rhythm, only while the message cannot have surfaced: once it may have, a standby
    // may hold it, and this hide would keep the standby's copy hidden (as a timer that fired late after a pause would).
    if (beside && this.surfaced()) return;
    let refused = false;
    const { hold } = this.options;
    const sentMark = this.clock.elapsed();
    // In rhythm, after a renewal held, the lease says whose the message is; beside, only its receipt does.
    const extension: Promise<void> = hold
      .hide(this.options.visibilitySeconds, beside ? {} : { leaseHeldUntil: this.lastRenewedAt + this.options.leaseMs })
      .then((sent) => {
        // Not sent: the receipt may have lapsed, a standby may hold the message. As refused, below.
        if (!sent) throw new ReceiptLapsedError();
      })
      .then(
        () => {},
        (error: unknown) => {
          if (!(error instanceof ReceiptLapsedError)) this.onRenewError(error);
          // An extension sent after this one has landed (one beside it): this one no longer matters.
          if (hold.hiddenMark > sentMark) return;
          // Refused (throttled, say): the message may surface before the next heartbeat's renewal lands, and a standby
          // given it would take over this live holder. Disarm that takeover now, a heartbeat sooner (a drill: the
          // disarming renewal a heartbeat later landed after the standby's claim on a loaded emulator).
          if (this.takeover !== 'disarmed' || typeof this.changing === 'object') {
            this.disarmNow = true;
            this.wake.abort();
            refused = true;
          }
        },
      )
      .finally(() => {
        this.extensions.delete(extension);
        // And send the extension again beside that renewal, once: either landing keeps this holder.
        if (refused && !beside && this.takeover !== 'disarmed') this.extendVisibility(true);
      });
    this.extensions.add(extension);
  }

  /** Could the message have surfaced already (half a heartbeat of margin)? */
  private surfaced(): boolean {
    return this.options.hold.msUntilSurfacing() <= this.options.heartbeatMs / 2;
  }

  /** The first renewal of a claim that came back when its message may already have surfaced: it disarms, whatever. */
  private firstOfOvertakeable(): boolean {
    return this.options.overtakeable === true && this.lastRenewedAt === this.options.claimedAt;
  }

  /** The change of the takeover's state the renewal about to be sent carries: the transitions of the header. */
  private takeoverChange(): MessageBackChange | undefined {
    return messageBackChange(this.takeover, {
      extensionRefused: this.disarmNow,
      firstOfOvertakeable: this.firstOfOvertakeable(),
      mayBeVisible: this.mayBeVisible(),
      heldThroughout: this.options.hold.heldThroughout(),
      messageId: this.options.messageId,
    });
  }

  /**
   * One renewal, given up on when the lease we last saw renewed runs out
   * before it answers (a hung request): the signal must fire then, not when
   * the request finally returns. The takeover's change goes with it to the store.
   */
  private async renewWithinLease(now: number): Promise<void> {
    const { key, fence, leaseMs } = this.options;
    // Before a disarm for want of an extension, one still in flight may land in time (awaitExtensionInFlight).
    if (this.takeover !== 'disarmed' && !this.firstOfOvertakeable() && this.mayBeVisible()) await this.awaitExtensionInFlight();
    const change = this.takeoverChange();
    this.changing = change;
    const renewal = this.slices
      .renew({ key, fence }, now, leaseMs, change)
      .then(
        () => {
          if (change === 'disarm') this.disarmNow = false;
          this.takeover = takeoverAfter(this.takeover, change, 'landed');
        },
        (error: unknown) => {
          // Refused: the fence moved on. Any other failure may have landed (timed out, its reply lost).
          this.takeover = takeoverAfter(this.takeover, change, error instanceof LeaseLostError ? 'refused' : 'unknown');
          throw error;
        },
      )
      .finally(() => (this.changing = undefined));
    const armedAfter = takeoverAfter(this.takeover, change, 'landed') === 'armed';
    // Still unanswered a heartbeat before the message could surface (a loaded table): extend it now, not after the
    // answer, or a standby given the message takes this live holder over on the holder's-message-back rule.
    // Should this renewal then be refused, the message stays hidden one visibility timeout longer than it had to.
    // Beside an extension still in flight: one that hangs must not keep this one back.
    const early = new AbortController();
    if (armedAfter) {
      this.clock.sleep(this.options.hold.msUntilSurfacing() - this.options.heartbeatMs, early.signal).then(
        () => this.extendVisibility(true),
        () => {},
      );
    }
    const ranOut = new AbortController();
    const deadline = this.clock.sleep(this.lastRenewedAt + leaseMs - this.clock.elapsed(), ranOut.signal).then(
      () => Promise.reject(new LeaseRanOutError()),
      () => undefined,
    );
    // Stopped (the attempt ended, its commit landed): nothing waits for a renewal still in flight. Awaited, a hung
    // renewal held the end of the attempt back by its 3 s timeout: the committed event and the message's delete came
    // that much after the commit (a drill read the run as still going and its next occurrence as an overlap).
    const stopped = new Promise<void>((resolve) => {
      if (this.stopped.signal.aborted) resolve(); // stopped while it waited for an extension in flight
      this.stopped.signal.addEventListener('abort', () => resolve(), { once: true, signal: ranOut.signal });
    });
    renewal.catch(() => {}); // once the deadline or the stop won, nothing awaits it
    try {
      await Promise.race([renewal, deadline, stopped]);
    } finally {
      ranOut.abort();
      early.abort();
    }
  }
}

/** An extension not sent: its receipt may have lapsed. */
class ReceiptLapsedError extends CronfenceError {
  override name = 'ReceiptLapsedError';
  constructor() {
    super('the message may have surfaced: its receipt is no longer used');
  }
}

/** No renewal answered before the lease ran out. */
class LeaseRanOutError extends CronfenceError {
  override name = 'LeaseRanOutError';
  constructor() {
    super('no renewal answered before the lease ran out');
  }
}
