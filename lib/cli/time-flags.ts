/**
 * Time flags shared by `cronfence runs` and `cronfence verify`: an ISO time
 * (`2026-05-01T12:00:00Z`) or a duration ago (`90s`, `10m`, `2h`, `7d`).
 */
import { InvalidArgumentError } from 'commander';

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/**
 * @param now what "ago" counts back from.
 * @throws {InvalidArgumentError} naming the value (commander names the flag).
 */
export function parseTimeAgo(value: string, now: number = Date.now()): number {
  const relative = parseDuration(value);
  if (relative !== undefined) return now - relative;
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed)) throw new InvalidArgumentError(`${JSON.stringify(value)} is neither an ISO time nor a duration like 10m`);
  return parsed;
}

/** `500ms`, `30s`, `2m`, `1h`, `1d` in ms, or undefined when `value` is not one. */
export function parseDuration(value: string): number | undefined {
  const match = DURATION.exec(value.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
}

/** A duration flag's parser. @throws {InvalidArgumentError} */
export function parseDurationFlag(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) throw new InvalidArgumentError(`${JSON.stringify(value)} is not a duration like 500ms, 30s, 2m or 1h`);
  return ms;
}
