/**
 * The settlement drill's checks (`npm run chaos -- --settlement`). Pure: what
 * the stores and the mock bank hold after the drill (payout rows, chunk
 * records, outbox items, booked wires) and what the workers reported (chunk
 * outcomes, claims), for every settlement occurrence in the window:
 *
 * - exactly one payout row per merchant, none missing (a row rewritten by a
 *   later attempt carries that attempt's fence: a redone chunk);
 * - exactly one accepted wire per merchant at the bank, counted by the
 *   merchant the wire pays, not by its idempotency key (two keys for one
 *   merchant would be two payments);
 * - no committed chunk redone: each chunk committed by one attempt only, its
 *   rows carrying that attempt's fence;
 * - what a standby skipped (found committed at its checkpoint) and what the
 *   fence refused (a zombie's late chunk), reported, not bounded.
 */
import { distribution, type Distribution } from '../../lib/core/stats.ts';
import type { InjectedProcessFault, ObservedChunk } from './observed.ts';
import { isBoundedFailover, type Failover } from './takeovers.ts';

export interface SettlementStoreRecords {
  readonly executionKey: string;
  /** The slice's final status (undefined: no slice). */
  readonly status?: string;
  readonly chunkRecords: readonly { readonly chunk: number; readonly fence: number; readonly committedAt: number }[];
  /** Payout rows of this execution (the summary row left out). */
  readonly payouts: readonly { readonly merchant: string; readonly chunk: number; readonly fence: number }[];
  /** Wires the bank accepted for this execution, by the merchant each pays. */
  readonly wires: readonly { readonly merchant: string }[];
  /** Outbox items by status (PENDING, DELIVERED, DEAD). */
  readonly outbox: Readonly<Record<string, number>>;
}

export interface SettlementCheckInput {
  readonly merchants: number;
  readonly chunks: number;
  readonly occurrences: readonly SettlementStoreRecords[];
  readonly reports: readonly ObservedChunk[];
  /** The drill's failovers (takeovers.ts); those of settlement slices are kept. */
  readonly failovers: readonly Failover[];
  readonly processFaults: readonly InjectedProcessFault[];
}

export interface SettlementOccurrenceVerdict {
  readonly executionKey: string;
  readonly status: string;
  readonly payoutRows: number;
  readonly duplicatePayouts: number;
  readonly missingPayouts: number;
  readonly acceptedWires: number;
  readonly duplicateWires: number;
  readonly missingWires: number;
  readonly outbox: Readonly<Record<string, number>>;
  readonly chunksCommitted: number;
  readonly committedChunksRedone: number;
  readonly chunksSkippedByStandby: number;
  readonly zombieChunksRefused: number;
  /** Kills and pauses of a worker that had committed some of this settlement's chunks and not all. */
  readonly faultsMidBatch: number;
  readonly takeovers: number;
}

export interface SettlementVerdict {
  readonly occurrences: SettlementOccurrenceVerdict[];
  readonly totals: Omit<SettlementOccurrenceVerdict, 'executionKey' | 'status' | 'outbox'>;
  /** Holder's last heartbeat → standby's claim, unhindered by an injected AWS fault (the drill's bound applies). */
  readonly failover: Distribution;
  /** The same takeovers, from the kill or pause itself. */
  readonly failoverFromFault: Distribution;
  readonly slowestFailovers: {
    executionKey: string;
    victim: string;
    standby: string;
    fault: string;
    latencyMs: number;
    fromFaultMs: number;
  }[];
}

export function checkSettlement(input: SettlementCheckInput): SettlementVerdict {
  const occurrences = input.occurrences.map((records) => checkOccurrence(input, records));
  const keys = new Set(input.occurrences.map((records) => records.executionKey));
  const failovers = input.failovers.filter((failover) => keys.has(failover.executionKey));
  const fromFault = (failover: Failover): number => {
    const fault = input.processFaults
      .filter((candidate) => candidate.replica === failover.victim && candidate.at <= failover.takeoverAt)
      .sort((a, b) => a.at - b.at)
      .at(-1);
    return failover.takeoverAt - (fault?.at ?? failover.lastHeartbeatAt);
  };
  const sum = (field: keyof SettlementVerdict['totals']): number => occurrences.reduce((total, occurrence) => total + occurrence[field], 0);
  const totalFields = [
    'payoutRows',
    'duplicatePayouts',
    'missingPayouts',
    'acceptedWires',
    'duplicateWires',
    'missingWires',
    'chunksCommitted',
    'committedChunksRedone',
    'chunksSkippedByStandby',
    'zombieChunksRefused',
    'faultsMidBatch',
    'takeovers',
  ] as const;
  return {
    occurrences,
    totals: Object.fromEntries(totalFields.map((field) => [field, sum(field)])) as SettlementVerdict['totals'],
    failover: distribution(failovers.filter(isBoundedFailover).map((failover) => failover.latencyMs)),
    failoverFromFault: distribution(failovers.map(fromFault)),
    slowestFailovers: [...failovers]
      .sort((a, b) => b.latencyMs - a.latencyMs)
      .slice(0, 5)
      .map((failover) => ({
        executionKey: failover.executionKey,
        victim: failover.victim,
        standby: failover.standby,
        fault: failover.fault,
        latencyMs: Math.round(failover.latencyMs),
        fromFaultMs: Math.round(fromFault(failover)),
      })),
  };
}

function checkOccurrence(input: SettlementCheckInput, records: SettlementStoreRecords): SettlementOccurrenceVerdict {
  const reports = input.reports.filter((report) => report.executionKey === records.executionKey);
  const payoutsByMerchant = countBy(records.payouts.map((payout) => payout.merchant));
  const wiresByMerchant = countBy(records.wires.map((wire) => wire.merchant));
  const attempts = new Set(reports.map((report) => `${report.replica}#${report.fence}`));
  return {
    executionKey: records.executionKey,
    status: records.status ?? 'NO SLICE',
    payoutRows: records.payouts.length,
    duplicatePayouts: [...payoutsByMerchant.values()].filter((count) => count > 1).length,
    missingPayouts: Math.max(0, input.merchants - payoutsByMerchant.size),
    acceptedWires: records.wires.length,
    duplicateWires: [...wiresByMerchant.values()].filter((count) => count > 1).length,
    missingWires: Math.max(0, input.merchants - wiresByMerchant.size),
    outbox: records.outbox,
    chunksCommitted: records.chunkRecords.length,
    committedChunksRedone: redoneChunks(records, reports).size,
    chunksSkippedByStandby: distinct(reports.filter((report) => report.outcome === 'already-committed')),
    zombieChunksRefused: distinct(reports.filter((report) => report.outcome === 'refused')),
    faultsMidBatch: faultsMidBatch(reports, input.processFaults),
    takeovers: Math.max(0, attempts.size - 1),
  };
}

/**
 * Chunks whose work landed more than once: committed by two attempts, or
 * committed by an attempt other than the one its record names, or with a
 * payout row written under another fence than its record's.
 */
export function redoneChunks(records: SettlementStoreRecords, reports: readonly ObservedChunk[]): Set<number> {
  const recordFence = new Map(records.chunkRecords.map((record) => [record.chunk, record.fence]));
  const redone = new Set<number>();
  const committedBy = new Map<number, Set<number>>();
  for (const report of reports) {
    if (report.outcome !== 'committed') continue;
    const fences = committedBy.get(report.chunk) ?? new Set<number>();
    fences.add(report.fence);
    committedBy.set(report.chunk, fences);
    const fence = recordFence.get(report.chunk);
    if (fences.size > 1 || (fence !== undefined && fence !== report.fence)) redone.add(report.chunk);
  }
  for (const payout of records.payouts) {
    const fence = recordFence.get(payout.chunk);
    if (fence !== undefined && fence !== payout.fence) redone.add(payout.chunk);
  }
  return redone;
}

/**
 * Kills and pauses of a replica that had reported a chunk of this execution,
 * after which more of its chunks were committed (by anyone): the batch was
 * under way and not done. Report times only (the drill's clock; a chunk
 * record's `committedAt` is by the worker's skewed clock).
 */
function faultsMidBatch(reports: readonly ObservedChunk[], processFaults: readonly InjectedProcessFault[]): number {
  return processFaults.filter(
    (fault) =>
      reports.some((report) => report.replica === fault.replica && report.at <= fault.at) &&
      reports.some((report) => report.outcome === 'committed' && report.at > fault.at),
  ).length;
}

/** The settlement's broken invariants, one line each. */
export function settlementViolations(
  verdict: SettlementVerdict,
  expected: { readonly merchants: number; readonly chunks: number; readonly failoverBoundMs: number },
): string[] {
  const broken: string[] = [];
  if (verdict.occurrences.length === 0) broken.push('settlement: no occurrence in the window (run the drill for at least 60 s)');
  for (const o of verdict.occurrences) {
    const at = `settlement ${o.executionKey}`;
    if (o.status !== 'SUCCEEDED') broken.push(`${at} ended ${o.status}`);
    if (o.payoutRows !== expected.merchants || o.duplicatePayouts > 0 || o.missingPayouts > 0) {
      broken.push(
        `${at}: ${o.payoutRows} payout rows (${o.duplicatePayouts} merchants twice, ${o.missingPayouts} missing), not ${expected.merchants}`,
      );
    }
    if (o.acceptedWires !== expected.merchants || o.duplicateWires > 0 || o.missingWires > 0) {
      broken.push(
        `${at}: ${o.acceptedWires} wires accepted (${o.duplicateWires} merchants paid twice, ${o.missingWires} unpaid), not ${expected.merchants}`,
      );
    }
    if (o.chunksCommitted !== expected.chunks) broken.push(`${at}: ${o.chunksCommitted} chunk records, not ${expected.chunks}`);
    if (o.committedChunksRedone > 0) broken.push(`${at}: ${o.committedChunksRedone} committed chunks redone after a takeover`);
  }
  if (verdict.failover.count > 0 && verdict.failover.max >= expected.failoverBoundMs) {
    broken.push(`settlement failover max ${Math.round(verdict.failover.max)} ms is not under ${expected.failoverBoundMs} ms`);
  }
  return broken;
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function distinct(reports: readonly ObservedChunk[]): number {
  return new Set(reports.map((report) => `${report.fence}#${report.chunk}`)).size;
}
