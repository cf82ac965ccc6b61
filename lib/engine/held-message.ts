/**
 * One received message, from its receive to its disposition, and once its slice is claimed, that slice's lease: the
 * one object that changes the message's visibility and renews the lease, so the two timers that let a standby in
 * (the message surfacing, the lease running out) are kept apart from a live holder in one place.
 *
 *   receive    claim   renew         renew         renew         (holder dies)
 *      |---------|-------|-------------|-------------|----------x
 *      [ HELD   ]        \ extend      \ extend      \ extend
 *   message: hidden since the last hide SQS accepted, for its timeout (lease − heartbeat, 3 s) → surfaces → a standby
 *   lease:            [lease (4 s) from each renewal .................................] + skew margin (4 s) → anyone
 *
 * States and transitions:
 *
 *   HELD      Received, not claimed (or claimed and not yet leased: the overlap gate). The receipt holds the message
 *             until the margin before it could surface (`lapsed`); a visibility change goes only before then, and is
 *             abandoned (aborted, not retried) if it has not landed by then: after, another consumer may have the
 *             message, and a change with this receipt would hide *their* copy (a stale receipt handle is not promised
 *             to be refused: the emulator and the in-memory queue apply it). A slow claim or gate keeps the message
 *             hidden through `keepHiddenWhile`. Every disposition (`hide` until a retry, a lane, the slice's second)
 *             goes through here too.
 *   HELD → LEASED (`startLease`): the claim won. Every `heartbeatMs` a renewal on the fence, then an extension of the
 *             visibility. The takeover on the holder's message back (`isClaimable`) is ARMED, DISARMED or UNKNOWN, and
 *             each change rides on a renewal (`MessageBackChange`: the pure transitions are core/message-back.ts):
 *
 *   ARMED     The row names the message: its coming back admits a standby. Failover after the last extension:
 *             the visibility, a receive and a claim (about 3-3.5 s).
 *   DISARMED  The row names none: only the lease's end plus the skew margin does (about 8-9 s after the last renewal).
 *
 *   ARMED → DISARMED   the message could surface before the next renewal lands (no extension accepted for
 *                      visibility − heartbeat), an extension was refused, an extension landed after the receipt
 *                      lapsed (it may have surfaced meanwhile: `heldThroughout`), or the claim came back when the
 *                      message may already have surfaced (`overtakeable`, judged by `mayHaveSurfaced` once a change
 *                      still in flight landed): a standby given it must not take over a live holder.
 *   DISARMED → ARMED   the message has been hidden throughout since the receive (`heldThroughout`) and stays so past
 *                      the next renewal: no later delivery of it exists, so its coming back again means this holder's
 *                      heartbeats stopped.
 *   → UNKNOWN          a renewal carrying a change failed with its outcome unknown (timed out, its reply lost): the row
 *                      may say either. The next renewal re-arms if DISARMED → ARMED holds, and disarms otherwise.
 *   → LOST             a renewal refused (the fence moved on), or none answered before the lease ran out, or the
 *                      next one due only after it ran out (a pause; not sent): `leaseSignal` aborts with a
 *                      LeaseLostError and the renewals stop.
 *   → ENDED            `endLease()`: the attempt ended; nothing waits for a request still in flight. The message stays
 *                      HELD for its disposition.
 *
 * Extensions: one after each renewal that held (never before: a zombie's would hide its standby's copy), in the
 * background, and abandoned once that renewal's lease could have run out; a second beside one still unanswered, and
 * one early while a renewal is slow, each only while the message cannot have surfaced. docs/architecture.md ("The
 * lease") gives the design in a page; docs/chaos.md the incidents behind each rule.
 */
import type { Clock } from '../core/clock.ts';
import { CronfenceError, LeaseLostError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { messageBackChange, takeoverAfter, type MessageBackChange, type Takeover } from '../core/message-back.ts';
import type { SliceStore, WorkQueue } from '../core/ports.ts';
import type { SliceKey } from '../core/slice.ts';

/** Where a message's changes go: the work queue, or the scan queue (which shares no request: `batched` goes alone). */
export type VisibilityQueue = Pick<WorkQueue, 'hide'> & Partial<Pick<WorkQueue, 'hideBatched'>>;

/** The pace of `keepHiddenWhile`: a change of `seconds` every `everyMs`, a failed one reported and left to the next. */
export interface KeepHiddenPace {
  readonly everyMs: number;
  readonly seconds: number;
  readonly onError?: (error: unknown) => void;
}

/** The lease a won claim set: what `startLease` renews. Every duration is on the clock's `elapsed` reading. */
export interface LeaseTerms {
  readonly key: SliceKey;
  readonly fence: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** What each heartbeat sets the message's visibility timeout to (see `messageVisibilitySeconds`). */
  readonly visibilitySeconds: number;
  /** When the claim that set the lease was sent, on the clock's `elapsed` reading. */
  readonly claimedAt: number;
  /**
   * The claim returned when its message may already have surfaced again: a standby given it may claim on the
   * holder's-message-back rule before this lease is renewed. The first renewal is sent at once and disarms that rule.
   */
  readonly overtakeable?: boolean;
  /** The message the lease was claimed with (the slice's `leaseMessageId`): a re-arming renewal names it again. */
  readonly messageId?: string;
}

/**
 * How long before the computed surfacing a change is no longer sent (the receive's reply transit, SQS's own timing):
 * half a heartbeat, a sixth of the visibility (a job's visibility is its lease less a heartbeat, three heartbeats by
 * default: core/slice.ts), at most half a second.
 */
const MAX_SURFACE_MARGIN_MS = 500;

export class HeldMessage {
  // HELD: the message's visibility, as far as its receiver can count on it.
  /**
   * When the last accepted hide was sent (at first, the receive), on the clock's `elapsed` reading: a step of the
   * worker's wall clock (NTP) must not move the count, or the hold would trust a hide by the size of the step.
   */
  private lastHiddenAt: number;
  private hiddenForMs: number;
  /** No hide was sent or landed past the receipt's lapse: the message has been hidden throughout, by this count. */
  private unbroken = true;
  /** Changes sent and not yet answered (each ends by the time it is abandoned: `hide`). */
  private readonly changes = new Set<Promise<unknown>>();

  // LEASED: set by `startLease`.
  private terms: LeaseTerms | undefined;
  private onRenewError: (error: unknown) => void = () => {};
  private readonly lostController = new AbortController();
  private readonly ended = new AbortController();
  /** When the last renewal that held was sent (at first, the claim), on the clock's `elapsed` reading. */
  private lastRenewedAt = 0;
  /** Extensions sent and not yet answered: one at a time, and a second beside one that hangs (`awaitExtensionInFlight`). */
  private readonly extensions = new Set<Promise<void>>();
  /** The holder's-message-back takeover, as the last renewal that changed it left the row (header). */
  private takeover: Takeover = 'armed';
  /** An extension was refused: the next renewal disarms, whatever `mayBeVisible` says. */
  private disarmNow = false;
  /** The change the renewal in flight carries: a refusal while it re-arms must still disarm after it. */
  private changing: MessageBackChange | undefined;
  private renewals: Promise<void> | undefined;
  /** Aborted to send the next renewal now rather than after the heartbeat's wait (an extension SQS refused). */
  private wake = new AbortController();
  private confirm: { resolve: () => void; promise: Promise<void> } | undefined;

  constructor(
    private readonly queue: VisibilityQueue,
    private readonly clock: Clock,
    readonly receiptHandle: string,
    /**
     * Since when SQS has hidden it at the earliest, by this clock, where its event source says (the local poller's:
     * the send of the receive try that answered, since SQS hid it somewhere between that and the reply's arrival);
     * undefined: from now.
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
    const change =
      options.batched && this.queue.hideBatched
        ? this.queue.hideBatched(this.receiptHandle, seconds, lapses)
        : this.queue.hide(this.receiptHandle, seconds, lapses);
    this.changes.add(change);
    try {
      await change;
    } finally {
      this.changes.delete(change);
    }
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
   * change goes once the last accepted hide is `everyMs` old (fast work on a fresh receive costs no request), and none
   * once the receipt has lapsed (another may hold the message). The work's result comes back when the work ends, not
   * after a change still in flight: that change lands or is abandoned at the receipt's lapse on its own (docs/chaos.md:
   * a won claim held back 10 s).
   */
  async keepHiddenWhile<T>(work: () => Promise<T>, pace: KeepHiddenPace): Promise<T> {
    const done = new AbortController();
    const beats = (async () => {
      // The first when the last accepted hide is `everyMs` old, not `everyMs` after the work starts: a message read
      // late (or kept through a slow claim before a gate) has less left than a fresh one.
      let wait = Math.max(0, pace.everyMs - this.msSinceHidden());
      for (;;) {
        try {
          await this.clock.sleep(wait, done.signal);
        } catch {
          return;
        }
        wait = pace.everyMs;
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

  /**
   * Could the message have surfaced since the receive, with `marginMs` to spare: no hide accepted for the
   * visibility less the margin, or one landed after the receipt lapsed? A change still in flight is waited for first
   * (never past its abandonment at the receipt's lapse): one that lands in time means the message never surfaced.
   */
  async mayHaveSurfaced(marginMs: number): Promise<boolean> {
    const surfaced = (): boolean => this.msUntilSurfacing() < marginMs || !this.unbroken;
    if (!surfaced() || this.changes.size === 0) return surfaced();
    await Promise.allSettled([...this.changes]);
    return surfaced();
  }

  /** HELD → LEASED: renews the lease the claim set, with the message's extensions, until `endLease` or the lease is lost. */
  startLease(slices: SliceStore, terms: LeaseTerms, onRenewError: (error: unknown) => void = () => {}): void {
    if (this.renewals) return;
    this.terms = terms;
    this.onRenewError = onRenewError;
    this.lastRenewedAt = terms.claimedAt;
    this.renewals = this.renew(slices, terms);
  }

  /** Aborts when the lease is lost. */
  get leaseSignal(): AbortSignal {
    return this.lostController.signal;
  }

  get leaseLost(): boolean {
    return this.lostController.signal.aborted;
  }

  /** Resolves once a renewal held (never, if the lease is lost first: race it against `leaseSignal`). */
  get leaseConfirmed(): Promise<void> {
    if (!this.confirm) {
      let resolve = (): void => {};
      const promise = new Promise<void>((settle) => (resolve = settle));
      this.confirm = { resolve, promise };
      if (this.terms && this.lastRenewedAt > this.terms.claimedAt) resolve();
    }
    return this.confirm.promise;
  }

  /** LEASED → ENDED: the attempt ended; returns without waiting for a renewal in flight. */
  async endLease(): Promise<void> {
    this.ended.abort();
    await this.renewals;
  }

  private async renew(slices: SliceStore, terms: LeaseTerms): Promise<void> {
    const { key, fence, leaseMs, heartbeatMs } = terms;
    const loseLease = (cause: unknown): void =>
      this.lostController.abort(new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence, { cause }));
    // The lease was set when the claim was sent: after a slow claim, the first renewal is due sooner (at once, if
    // the claim took a whole heartbeat), or a lease born nearly expired would lapse before it.
    let wait = terms.overtakeable ? 0 : Math.max(0, heartbeatMs - (this.clock.elapsed() - terms.claimedAt));
    // A receive read late counts as hidden since its try's send: its first renewal could find the message about to
    // surface and disarm. Extended now, while the receipt holds it, that renewal need not.
    if (this.mayBeVisible(wait)) this.extendVisibility(true);
    while (!this.ended.signal.aborted && !this.leaseLost) {
      try {
        await this.clock.sleep(wait, AbortSignal.any([this.ended.signal, this.wake.signal]));
      } catch {
        if (this.ended.signal.aborted) return;
      }
      wait = heartbeatMs;
      this.wake = new AbortController();
      const now = this.clock.now();
      const sentAt = this.clock.elapsed();
      // Woken after the lease it last saw renewed ran out (a pause): lost, and no renewal goes. Sent, it could land on a
      // row no standby has taken yet and hold every standby off for another lease, which this holder then gives up.
      if (sentAt >= this.lastRenewedAt + leaseMs) {
        loseLease(new LeaseRanOutError());
        return;
      }
      try {
        await this.renewWithinLease(slices, terms, now);
        // Ended while it was in flight: whether it landed is unknown and no longer matters; report no renewal.
        if (this.ended.signal.aborted) return;
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
          this.lostController.abort(error);
          return;
        }
        if (!(error instanceof LeaseRanOutError)) this.onRenewError(error);
        // Unsure whether we still hold it: once the lease we last saw renewed has run out, assume not.
        if (error instanceof LeaseRanOutError || this.clock.elapsed() >= this.lastRenewedAt + leaseMs) {
          loseLease(error);
          return;
        }
      }
    }
  }

  private get heartbeatMs(): number {
    return this.terms?.heartbeatMs ?? 0;
  }

  /** Could the message surface within a heartbeat of the renewal `inMs` from now: is the last extension SQS accepted that old? */
  private mayBeVisible(inMs = 0): boolean {
    return this.msUntilSurfacing() - inMs < this.heartbeatMs;
  }

  /** Could the message have surfaced already (half a heartbeat of margin)? */
  private surfaced(): boolean {
    return this.msUntilSurfacing() <= this.heartbeatMs / 2;
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
    const hiddenMark = this.hiddenMark;
    this.extendVisibility(true);
    const budget = new AbortController();
    let timedOut = false;
    const timeUp = this.clock.sleep(this.msUntilSurfacing() - this.heartbeatMs / 2, budget.signal).then(
      () => void (timedOut = true),
      () => {},
    );
    try {
      while (!timedOut && !this.disarmNow && this.extensions.size > 0 && this.hiddenMark === hiddenMark)
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
    const terms = this.terms;
    if (!terms || this.extensions.size > (beside ? 1 : 0) || this.ended.signal.aborted) return;
    // Sent outside the heartbeat's own rhythm, only while the message cannot have surfaced: once it may have, a standby
    // may hold it, and this hide would keep the standby's copy hidden (as a timer that fired late after a pause would).
    if (beside && this.surfaced()) return;
    let refused = false;
    const sentMark = this.clock.elapsed();
    // In rhythm, after a renewal held, the lease says whose the message is; beside, only its receipt does.
    const extension: Promise<void> = this.hide(
      terms.visibilitySeconds,
      beside ? {} : { leaseHeldUntil: this.lastRenewedAt + terms.leaseMs },
    )
      .then((sent) => {
        // Not sent: the receipt may have lapsed, a standby may hold the message. As refused, below.
        if (!sent) throw new ReceiptLapsedError();
      })
      .then(
        () => {},
        (error: unknown) => {
          if (!(error instanceof ReceiptLapsedError)) this.onRenewError(error);
          // An extension sent after this one has landed (one beside it): this one no longer matters.
          if (this.hiddenMark > sentMark) return;
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

  /** The first renewal of a claim that came back when its message may already have surfaced: it disarms, whatever. */
  private firstOfOvertakeable(terms: LeaseTerms): boolean {
    return terms.overtakeable === true && this.lastRenewedAt === terms.claimedAt;
  }

  /** The change of the takeover's state the renewal about to be sent carries: the transitions of the header. */
  private takeoverChange(terms: LeaseTerms): MessageBackChange | undefined {
    return messageBackChange(this.takeover, {
      extensionRefused: this.disarmNow,
      firstOfOvertakeable: this.firstOfOvertakeable(terms),
      mayBeVisible: this.mayBeVisible(),
      heldThroughout: this.heldThroughout(),
      messageId: terms.messageId,
    });
  }

  /**
   * One renewal, given up on when the lease we last saw renewed runs out
   * before it answers (a hung request): the signal must fire then, not when
   * the request finally returns. The takeover's change goes with it to the store.
   */
  private async renewWithinLease(slices: SliceStore, terms: LeaseTerms, now: number): Promise<void> {
    const { key, fence, leaseMs } = terms;
    // Before a disarm for want of an extension, one still in flight may land in time (awaitExtensionInFlight).
    if (this.takeover !== 'disarmed' && !this.firstOfOvertakeable(terms) && this.mayBeVisible()) await this.awaitExtensionInFlight();
    const change = this.takeoverChange(terms);
    this.changing = change;
    const renewal = slices
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
      this.clock.sleep(this.msUntilSurfacing() - this.heartbeatMs, early.signal).then(
        () => this.extendVisibility(true),
        () => {},
      );
    }
    const ranOut = new AbortController();
    const deadline = this.clock.sleep(this.lastRenewedAt + leaseMs - this.clock.elapsed(), ranOut.signal).then(
      () => Promise.reject(new LeaseRanOutError()),
      () => undefined,
    );
    // Ended (the attempt ended, its commit landed): nothing waits for a renewal still in flight. Awaited, a hung
    // renewal held the end of the attempt back by its 3 s timeout: the committed event and the message's delete came
    // that much after the commit (a drill read the run as still going and its next occurrence as an overlap).
    const ended = new Promise<void>((resolve) => {
      if (this.ended.signal.aborted) resolve(); // ended while it waited for an extension in flight
      this.ended.signal.addEventListener('abort', () => resolve(), { once: true, signal: ranOut.signal });
    });
    renewal.catch(() => {}); // once the deadline or the end won, nothing awaits it
    try {
      await Promise.race([renewal, deadline, ended]);
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
