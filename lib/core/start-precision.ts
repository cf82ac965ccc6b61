/**
 * Start precision: how close to its second a slice's handler starts, traded
 * against what the worker pays to wait for it. SQS delays are whole seconds,
 * so a message sent at an arbitrary moment cannot surface on its second:
 *
 *   exact          ──surfaces──claim──wait────┤start        (message in the second before; the worker waits)
 *   within-second                             ├──surfaces──claim──start   (at or after the second; no wait)
 *                                          second
 *
 * `exact` bills the worker's Lambda for the wait (half a second on average,
 * at its memory) on every invocation; `within-second` starts up to about a
 * second after the slot (the rounding, then the receive and the claim), with
 * nothing to wait for. Either way the worker never starts a handler before
 * its second by its own clock (worker.ts), and the slot keeps its nominal
 * execution key.
 */

export const START_PRECISIONS = ['exact', 'within-second'] as const;
export type StartPrecision = (typeof START_PRECISIONS)[number];
/** A cron scheduler's promise is the second: a stored job without the policy keeps it (docs/schedules.md, "Start precision"). */
export const DEFAULT_START_PRECISION: StartPrecision = 'exact';

/** How much later than its start a slice may surface under `precision`: the rounding up, under a second, for `within-second`. */
export function surfaceSlackMs(precision: StartPrecision | undefined): number {
  return precision === 'within-second' ? 1000 : 0;
}

/**
 * The SQS delay that has a message sent at `now` surface for a start at `startAt`:
 * `exact` rounds down (it surfaces in the second before `startAt`, never after it),
 * `within-second` rounds up (it surfaces at or after `startAt`, never before it).
 * Not negative: a start already past is sent at once. SQS's 900 s cap is the sender's.
 */
export function surfaceDelaySeconds(startAt: number, now: number, precision: StartPrecision | undefined): number {
  const seconds = (startAt - now) / 1000;
  return Math.max(0, precision === 'within-second' ? Math.ceil(seconds) : Math.floor(seconds));
}
