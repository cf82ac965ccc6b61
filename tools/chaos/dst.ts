/**
 * The DST mode (`--dst`): every process's clock (the drill's own, each
 * replica's, skew on top) is offset so that the drill window crosses a DST
 * transition of America/New_York, where a share of the jobs run schedules
 * inside the local hours that the transition removes or repeats.
 */
export const DST_MODES = ['spring', 'fall'] as const;
export type DstMode = (typeof DST_MODES)[number];

export interface DstTransition {
  /** The instant of the transition (UTC). */
  readonly at: number;
  readonly description: string;
}

export const DST_TRANSITIONS: Record<DstMode, DstTransition> = {
  // 02:00 EST does not happen: the clocks go to 03:00 EDT. Local hour 2 does not exist that day.
  spring: { at: Date.parse('2026-03-08T07:00:00Z'), description: '2026-03-08 02:00 EST -> 03:00 EDT, America/New_York' },
  // 02:00 EDT is followed by 01:00 EST: local hour 1 happens twice that day.
  fall: { at: Date.parse('2026-11-01T06:00:00Z'), description: '2026-11-01 02:00 EDT -> 01:00 EST, America/New_York' },
};

/** Where in the window the transition falls: time before it for the jobs to settle, and after it for the gap or repeat to play out. */
const TRANSITION_AT_FRACTION = 0.4;

/**
 * The clock offset that puts the transition `TRANSITION_AT_FRACTION` into a
 * window of `durationMs` that starts about `setupMs` after `realNow`.
 */
export function dstClockOffsetMs(mode: DstMode, realNow: number, durationMs: number, setupMs: number): number {
  return DST_TRANSITIONS[mode].at - (realNow + setupMs + Math.round(durationMs * TRANSITION_AT_FRACTION));
}

/** `--dst` alone is the spring transition. @throws {RangeError} naming the value */
export function parseDstMode(value: string | boolean | undefined): DstMode | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return 'spring';
  if ((DST_MODES as readonly string[]).includes(value)) return value as DstMode;
  throw new RangeError(`--dst must be one of ${DST_MODES.join(', ')} (or given alone for spring); got ${JSON.stringify(value)}`);
}
