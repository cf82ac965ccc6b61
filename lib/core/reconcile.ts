/**
 * The reconciler's rule, pure: which occurrences of a reconciled wheel entry
 * need their message again. The slices table is what a run leaves behind, so
 * reading it (a fifth of a write's price) replaces indexing every slice for a
 * sweep: a slice enters the sweep index only when this rule finds it in
 * trouble, or when it waits on purpose (a retry, a buffered run, an
 * operator's slot).
 *
 * For each occurrence the entry covers (of the job's current generation
 * `generation`), once it is `graceMs` overdue:
 * - a slice, or a range record (MISSED, or SKIPPED by the misfire policy)
 *   standing for it: fine, unless it is RUNNING, out of the sweep index, and
 *   its lease ended more than the skew margin and the grace ago (its holder
 *   is gone and so is its message): `sweep` (into the sweep index, sent again);
 * - nothing, or only an older generation's SKIPPED slice (its message was
 *   claimed after a change and skipped; this generation's own was lost):
 *   `enqueue` (created ENQUEUED in the sweep index, then sent), so the sweep
 *   follows it to a final state even if this message is lost too.
 */
import { LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice } from './slice.ts';
import { recordStandingAt } from './slice-transitions.ts';

export type ReconcileAction =
  { readonly kind: 'enqueue'; readonly scheduledAt: number } | { readonly kind: 'sweep'; readonly scheduledAt: number };

export function reconcileOccurrences(
  occurrences: readonly number[],
  generation: number,
  slices: readonly Slice[],
  now: number,
  graceMs: number,
): ReconcileAction[] {
  const recordAt = recordStandingAt(slices, generation);
  const actions: ReconcileAction[] = [];
  for (const scheduledAt of occurrences) {
    const record = recordAt(scheduledAt);
    if (record === undefined) actions.push({ kind: 'enqueue', scheduledAt });
    else if (record.scheduledAt === scheduledAt && isAbandoned(record, now, graceMs)) actions.push({ kind: 'sweep', scheduledAt });
  }
  return actions;
}

/** RUNNING, not followed by the sweep, and not renewed for longer than any live holder could go without. */
function isAbandoned(slice: Slice, now: number, graceMs: number): boolean {
  return (
    slice.status === SliceStatus.Running &&
    slice.sweepAt === undefined &&
    (slice.leaseExpiresAt ?? 0) + LEASE_EXPIRY_MARGIN_MS + graceMs < now
  );
}
