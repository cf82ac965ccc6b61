/**
 * The holder's-message-back takeover of one lease (`isClaimable`), as its holder knows the row: the ARMED, DISARMED
 * and UNKNOWN transitions of the held message's header (lib/engine/held-message.ts), as pure functions of what the
 * holder knows when a renewal goes out and of how that renewal ended (test/unit/message-back.test.ts, row by row).
 */

/**
 * What a renewal does to the takeover. `disarm`: forget the message the lease was claimed with, so its coming back no
 * longer admits a standby (the holder could not keep it hidden); takeover then waits for the lease to expire. `rearm`:
 * name that message again, once the holder knows it stayed hidden throughout (no later delivery can exist), so a
 * holder that recovers fails over fast again.
 */
export type MessageBackChange = 'disarm' | { readonly rearm: string };

/** The takeover as the last renewal that changed it left the row, as far as the holder knows. */
export type Takeover = 'armed' | 'disarmed' | 'unknown';

/** What the holder knows as a renewal goes out. */
export interface RenewalView {
  /** An extension was refused since the last disarm landed: the renewal disarms, whatever else holds. */
  readonly extensionRefused: boolean;
  /** It is the first renewal of a claim that returned when its message may already have surfaced. */
  readonly firstOfOvertakeable: boolean;
  /** The message could surface before the next renewal lands (no extension accepted for visibility − heartbeat). */
  readonly mayBeVisible: boolean;
  /** The message has been hidden throughout since the receive, and still is (HeldMessage.heldThroughout). */
  readonly heldThroughout: boolean;
  /** The message the lease was claimed with (the slice's `leaseMessageId`), which a re-arm names. */
  readonly messageId: string | undefined;
}

/** The change the renewal about to go out carries, if any. */
export function messageBackChange(takeover: Takeover, view: RenewalView): MessageBackChange | undefined {
  if (takeover === 'armed') {
    const unsure = view.extensionRefused || view.firstOfOvertakeable || view.mayBeVisible || !view.heldThroughout;
    return unsure ? 'disarm' : undefined;
  }
  const hiddenThroughout = !view.extensionRefused && !view.mayBeVisible && view.heldThroughout;
  if (hiddenThroughout && view.messageId !== undefined) return { rearm: view.messageId };
  return takeover === 'unknown' ? 'disarm' : undefined;
}

/**
 * The takeover after a renewal that carried `change`: `landed`; `refused` (the fence moved on: the row is no longer
 * this holder's, nothing it sent changed it); `unknown` (timed out or its reply lost: it may have landed).
 */
export function takeoverAfter(
  takeover: Takeover,
  change: MessageBackChange | undefined,
  outcome: 'landed' | 'refused' | 'unknown',
): Takeover {
  if (change === undefined || outcome === 'refused') return takeover;
  if (outcome === 'unknown') return 'unknown';
  return change === 'disarm' ? 'disarmed' : 'armed';
}
