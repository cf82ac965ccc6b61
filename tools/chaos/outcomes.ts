/**
 * Is every outcome on record honest? From the stores (slice, ledger, the
 * handlers' business rows, the dead-letter queue) and the events: a
 * committed slice never DEAD or dead-lettered, a DEAD one never reported
 * committed, and a SUCCEEDED slice has the business write its handler makes.
 */
import type { LedgerRecord } from '../../lib/core/ledger.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import type { DeadLetterEntry, ObservedEvent } from './observed.ts';

export interface Effect {
  readonly executionKey: string;
  readonly fence: number;
  readonly worker: string;
}

export interface OutcomeRecords {
  readonly sliceByKey: ReadonlyMap<string, Slice>;
  readonly ledgerByKey: ReadonlyMap<string, LedgerRecord>;
  readonly effectsByKey: ReadonlyMap<string, readonly Effect[]>;
  readonly eventsByKey: ReadonlyMap<string, readonly ObservedEvent[]>;
  readonly deadLetters: readonly DeadLetterEntry[];
}

/**
 * Execution keys that are both committed (slice or ledger SUCCEEDED, or a
 * `committed` event) and dead (slice or ledger DEAD, a `dead` event, or a
 * record on the dead-letter queue).
 */
export function committedThenDead(records: OutcomeRecords): string[] {
  const deadLettered = new Set(records.deadLetters.map((entry) => entry.executionKey));
  const keys = new Set([...records.sliceByKey.keys(), ...records.ledgerByKey.keys(), ...records.eventsByKey.keys(), ...deadLettered]);
  return [...keys].filter((key) => {
    const slice = records.sliceByKey.get(key);
    const ledger = records.ledgerByKey.get(key);
    const types = new Set((records.eventsByKey.get(key) ?? []).map((observed) => observed.event.type));
    const committed = slice?.status === SliceStatus.Succeeded || ledger?.outcome === 'SUCCEEDED' || types.has('committed');
    const dead = slice?.status === SliceStatus.Dead || ledger?.outcome === 'DEAD' || types.has('dead') || deadLettered.has(key);
    return committed && dead;
  });
}

/**
 * SUCCEEDED slices (or SUCCEEDED ledger records) without the business row
 * of the committing claim: every drill handler commits one row keyed by its
 * execution key and fence. A SUCCEEDED slice without a ledger record counts
 * too (the ledger is part of the same commit).
 */
export function succeededWithoutWrites(records: OutcomeRecords): string[] {
  const keys = new Set([...records.sliceByKey.keys(), ...records.ledgerByKey.keys()]);
  return [...keys].filter((key) => {
    const slice = records.sliceByKey.get(key);
    const ledger = records.ledgerByKey.get(key);
    if (slice?.status !== SliceStatus.Succeeded && ledger?.outcome !== 'SUCCEEDED') return false;
    if (!ledger || ledger.outcome !== 'SUCCEEDED') return true;
    return !(records.effectsByKey.get(key) ?? []).some((effect) => effect.fence === ledger.fence);
  });
}
