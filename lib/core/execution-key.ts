/**
 * The execution key `jobId:scheduledAt` names one slice everywhere: the slice
 * item, the ledger's unique record, and the idempotency key handed to user
 * code for side effects outside DynamoDB. Job ids may not contain ':' so the
 * key splits unambiguously at its first colon.
 */
export function executionKey(jobId: string, scheduledAt: number): string {
  return `${jobId}:${isoInstant(scheduledAt)}`;
}

/**
 * ISO 8601 UTC at second precision for a scheduled occurrence (a whole
 * second), at millisecond precision for an operator's triggered slot (a
 * sub-second instant, core/operator.ts): `2026-11-29T18:30:00.417Z`.
 */
export function isoInstant(epochMs: number): string {
  return epochMs % 1000 === 0 ? isoSecond(epochMs) : new Date(epochMs).toISOString();
}

/** ISO 8601 UTC at second precision: `2026-11-29T18:30:00Z`. */
export function isoSecond(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function parseExecutionKey(key: string): { jobId: string; scheduledAt: number } | undefined {
  const colon = key.indexOf(':');
  if (colon <= 0) return undefined;
  const scheduledAt = Date.parse(key.slice(colon + 1));
  if (Number.isNaN(scheduledAt)) return undefined;
  return { jobId: key.slice(0, colon), scheduledAt };
}
