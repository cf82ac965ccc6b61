/**
 * A claim: the slice it holds, the fence it won, and who holds it (the
 * worker's id). The writes after a claim take it as one value instead of a
 * key, a fence and an owner side by side.
 *
 * Which writes condition on what (the rule each store follows, slice-transitions.ts):
 * - every write after a claim conditions on its fence: the fence grows by one at
 *   every claim, so it alone tells this claim from any later one;
 * - the writes that end the claim with a ledger record, commit and DEAD
 *   (FINALIZE, `mayFinalize`), condition on the owner too: the record names who
 *   wrote it, and a refused finalize is judged "my own earlier try" by fence and
 *   owner (`finalizeRefusal`), so the write must prove both;
 * - the others condition on the fence alone, and take a {@link FencedClaim}: renew,
 *   fail and skip by the holder (`holdsLease`), defer behind a run, and the writes
 *   made on another's claim (the reconciler following an abandoned run, a newer run
 *   fencing out an older one), which know its fence but act whoever holds it. The
 *   owner would exclude nothing the fence does not.
 */
import type { SliceKey } from './slice.ts';

export interface Claim {
  readonly key: SliceKey;
  readonly fence: number;
  readonly owner: string;
}

/** A claim as the writes that condition on its fence alone take it. */
export type FencedClaim = Pick<Claim, 'key' | 'fence'>;
