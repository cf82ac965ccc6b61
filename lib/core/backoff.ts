/**
 * Retry delay: exponential backoff with full jitter (AWS Architecture Blog,
 * "Exponential Backoff And Jitter"): uniform in [0, min(cap, base * 2^(attempt-1))).
 * Full jitter spreads a thundering herd of retries after a shared outage.
 */
/**
 * Uniform in [0, 1): the jitter of every retry. Given once at wiring (Math.random in production, a seeded one in a
 * drill or simulation), so no adapter draws its own.
 */
export type Random = () => number;

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** `attempt` is the attempt that just failed, starting at 1. `random` returns [0, 1). */
export function retryDelayMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  return Math.floor(random() * backoffCeilingMs(attempt, policy));
}

/** The upper bound of the jittered delay after `attempt`. */
export function backoffCeilingMs(attempt: number, policy: BackoffPolicy): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}
