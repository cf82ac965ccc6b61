/**
 * The `poison` fault's checks (poison-faults.ts). Pure: from the poisonings
 * the drill made, the set-aside records the scans left on the wheel and the
 * `set_aside` events they emitted, and the occurrences the history check
 * found missed.
 *
 * - Each poisoned job must have been set aside in its poisoned generation (a
 *   `!aside#` record of that generation, or a `set_aside` event for it
 *   between the poisoning and the repair): the poisoned spell is long enough
 *   for a scan to meet it (MIN_POISONED_MS).
 * - No repaired generation may be set aside: the repair is what recovers it.
 * - Every other job's occurrences stay under the unchanged missed check. A
 *   poisoned job's occurrences from the poisoning to the repair are not
 *   expected (job-history.ts); those due in the REACH_BACK_MS before the
 *   poisoning that had not run when it came (a retry, a dropped message's
 *   reconciliation, a delayed copy) met the bad row too, and are excused:
 *   the job's own fault. From the repair on, its occurrences are expected
 *   again, as after any change.
 */
import type { SetAsideJob } from '../../lib/core/set-aside.ts';
import type { Poisoning } from './poison-faults.ts';

/**
 * How far before a poisoning an occurrence not yet run may have met the bad row (retries, delayed copies, a lost
 * message's reconciliation: the reconciler's 30 s grace, then the next tick's scan, every 5 s, and its requests).
 */
export const REACH_BACK_MS = 45_000;
/** How long a scan may run after its start (its `now`, the `at` of the events it emits): several requests of a loaded store. */
export const SCAN_SLACK_MS = 10_000;

export interface PoisonCheckInput {
  readonly poisonings: readonly Poisoning[];
  /** The `!aside#` records on the wheel at the end, every shard. */
  readonly setAside: readonly SetAsideJob[];
  /** `set_aside` events, on the drill's clock. */
  readonly setAsideEvents: readonly { readonly jobId: string; readonly at: number }[];
  /** What the history check found missed. */
  readonly missed: readonly { readonly executionKey: string; readonly jobId: string; readonly scheduledAt: number }[];
}

export interface PoisonVerdict {
  readonly poisonedJobs: number;
  /** Poisoned jobs set aside in their poisoned generation. */
  readonly poisonedSetAside: number;
  readonly repaired: number;
  /** Poisoned jobs no scan set aside. */
  readonly neverSetAside: string[];
  /** Jobs whose repaired generation was set aside. */
  readonly setAsideAfterRepair: string[];
  /** Poisoned jobs whose repair never landed. */
  readonly unrepaired: string[];
  /** Missed occurrences of a poisoned job, just before its poisoning: excused. */
  readonly excused: string[];
  /** What stays missed. */
  readonly missed: string[];
}

export function checkPoison(input: PoisonCheckInput): PoisonVerdict {
  const recordOf = new Map(input.setAside.map((record) => [record.jobId, record]));
  // An event's `at` is its scan's start, which may come before the poisoning the scan then read: an event counts from
  // SCAN_SLACK_MS before it, but never from before the job's previous repair.
  const spellStart = (p: Poisoning): number =>
    Math.max(
      p.at - SCAN_SLACK_MS,
      ...input.poisonings
        .filter((other) => other.jobId === p.jobId && (other.repairedAt ?? Infinity) <= p.at)
        .map((other) => other.repairedAt ?? 0),
    );
  const wasSetAside = (p: Poisoning): boolean =>
    recordOf.get(p.jobId)?.generation === p.generation ||
    input.setAsideEvents.some(
      (event) => event.jobId === p.jobId && event.at >= spellStart(p) && event.at < (p.repairedAt ?? Number.POSITIVE_INFINITY),
    );
  const excusedBy = (o: PoisonCheckInput['missed'][number]): boolean =>
    input.poisonings.some(
      (p) => p.jobId === o.jobId && o.scheduledAt >= p.at - REACH_BACK_MS && o.scheduledAt < (p.repairedAt ?? Number.POSITIVE_INFINITY),
    );
  const setAside = input.poisonings.filter(wasSetAside);
  return {
    poisonedJobs: new Set(input.poisonings.map((p) => p.jobId)).size,
    poisonedSetAside: new Set(setAside.map((p) => p.jobId)).size,
    repaired: input.poisonings.filter((p) => p.repairedAt !== undefined).length,
    neverSetAside: input.poisonings.filter((p) => !wasSetAside(p)).map((p) => p.jobId),
    // A later generation set aside is a fault only when no later poisoning of the same job explains it.
    setAsideAfterRepair: input.poisonings
      .filter((p) => {
        const generation = recordOf.get(p.jobId)?.generation ?? 0;
        const poisonedAgain = input.poisonings.some((other) => other.jobId === p.jobId && other.generation === generation);
        return p.repairedGeneration !== undefined && generation >= p.repairedGeneration && !poisonedAgain;
      })
      .map((p) => p.jobId),
    unrepaired: input.poisonings.filter((p) => p.repairedAt === undefined).map((p) => p.jobId),
    excused: input.missed.filter(excusedBy).map((o) => o.executionKey),
    missed: input.missed.filter((o) => !excusedBy(o)).map((o) => o.executionKey),
  };
}

/** The poison verdict's broken invariants, in words. */
export function poisonViolations(verdict: PoisonVerdict): string[] {
  const broken: string[] = [];
  if (verdict.neverSetAside.length > 0) broken.push(`poisoned jobs never set aside: ${verdict.neverSetAside.join(', ')}`);
  if (verdict.setAsideAfterRepair.length > 0) broken.push(`repaired jobs set aside again: ${verdict.setAsideAfterRepair.join(', ')}`);
  if (verdict.unrepaired.length > 0) broken.push(`poisoned jobs whose repair never landed: ${verdict.unrepaired.join(', ')}`);
  return broken;
}
