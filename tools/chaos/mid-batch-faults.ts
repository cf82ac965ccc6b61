/**
 * Mid-batch faults of the settlement: the first attempt at each settlement
 * is stopped (killed or paused) after a seeded number of its committed chunks,
 * the next one half the time after a few of its own, later ones run on. The
 * settlement drill and the simulation both plan them so.
 */
import type { ObservedChunk } from './observed.ts';
import type { SeededRandom } from './random.ts';

export type MidBatchFaultKind = 'kill' | 'pause';

/** A fault planned for one attempt: after its `afterChunks`-th committed chunk. */
interface Trigger {
  readonly afterChunks: number;
  readonly kind: MidBatchFaultKind;
  seen: number;
}

export class MidBatchFaults {
  private readonly triggers = new Map<string, Trigger | null>();
  private readonly attemptsSeen = new Map<string, number>();

  constructor(
    private readonly random: SeededRandom,
    private readonly kinds: readonly MidBatchFaultKind[],
    /** Chunks of one settlement: the first attempt stops after 2 to two thirds of them, the second after 1 to 4 in 15. */
    private readonly chunks: number,
  ) {}

  /** The fault to inject now: this committed chunk is the one its attempt's trigger waits for. */
  after(observed: ObservedChunk): MidBatchFaultKind | undefined {
    if (observed.outcome !== 'committed') return undefined;
    const trigger = this.triggerOf(observed);
    if (!trigger || ++trigger.seen !== trigger.afterChunks) return undefined;
    return trigger.kind;
  }

  private triggerOf(observed: ObservedChunk): Trigger | null {
    const attempt = `${observed.executionKey}#${observed.fence}`;
    const known = this.triggers.get(attempt);
    if (known !== undefined) return known;
    const index = this.attemptsSeen.get(observed.executionKey) ?? 0;
    this.attemptsSeen.set(observed.executionKey, index + 1);
    const { kinds, random, chunks } = this;
    const trigger: Trigger | null =
      kinds.length === 0 || index > 1 || (index === 1 && !random.chance(0.5))
        ? null
        : {
            afterChunks: index === 0 ? random.int(2, Math.round((chunks * 2) / 3)) : random.int(1, Math.ceil((chunks * 4) / 15)),
            kind: random.pick(kinds),
            seen: 0,
          };
    this.triggers.set(attempt, trigger);
    return trigger;
  }
}
