/**
 * The bank the settlement pays through: a payments API that, like most,
 * takes an `Idempotency-Key` header (a second request with the same key
 * returns the first wire instead of paying again). The handler does not call
 * it: each wire is recorded in cronfence's outbox with the chunk that books
 * the payout, and the outbox dispatcher (the construct's outbox Lambda, or
 * `cronfence dev`) sends it with `Idempotency-Key: <executionKey>#<merchant>`.
 */
import type { OutboundRequest } from 'cronfence';

/** Where wires go: set by the stack (workerEnvironment), or by a test; unset, the settlement books payouts without wiring. */
export function bankUrl(): string | undefined {
  return process.env.BANK_URL || undefined;
}

/** One merchant's wire: its request key (the merchant) names the idempotency key. */
export function wireRequest(url: string, merchant: string, amountMinor: number, reference: string): OutboundRequest {
  return {
    key: merchant,
    url: `${url}/wires`,
    body: JSON.stringify({ merchant, amountMinor, currency: 'INR', reference }),
  };
}
