/** report.json's settlement section (`--settlement`): settlement-checks.ts's verdict, rounded, with its violations. */
import { settlementViolations, type SettlementOccurrenceVerdict, type SettlementVerdict } from './settlement-checks.ts';

export interface SettlementReport {
  readonly merchants: number;
  readonly chunksPerSettlement: number;
  readonly occurrences: SettlementOccurrenceVerdict[];
  readonly totals: SettlementVerdict['totals'];
  /** Holder's last heartbeat → standby's claim (unhindered by an injected AWS fault), the drill's bound. */
  readonly failover: { p50Ms: number; p99Ms: number; maxMs: number; count: number };
  /** The same takeovers from the kill or pause itself. */
  readonly failoverFromFault: { p50Ms: number; maxMs: number; count: number };
  readonly slowestFailovers: SettlementVerdict['slowestFailovers'];
  /** Mid-batch kills and pauses the settlement drill added to the plan's. */
  readonly midBatchFaultsInjected: number;
  /** The mock bank: requests, replays answered from an earlier booking (the idempotency key at work), refusals (503). */
  readonly bank: { requests: number; replays: number; refused: number };
  /** settlement-checks.ts's findings. */
  readonly violations: string[];
}

/** The report's settlement section (report.ts) from the verdict, with its violations. */
export function settlementReport(
  verdict: SettlementVerdict,
  context: {
    readonly merchants: number;
    readonly chunks: number;
    readonly failoverBoundMs: number;
    readonly injected: number;
    readonly bank: { requests: number; replays: number; refused: number };
  },
): SettlementReport {
  const round = (n: number): number => (Number.isNaN(n) ? 0 : Math.round(n));
  return {
    merchants: context.merchants,
    chunksPerSettlement: context.chunks,
    occurrences: verdict.occurrences,
    totals: verdict.totals,
    failover: {
      p50Ms: round(verdict.failover.p50),
      p99Ms: round(verdict.failover.p99),
      maxMs: round(verdict.failover.max),
      count: verdict.failover.count,
    },
    failoverFromFault: {
      p50Ms: round(verdict.failoverFromFault.p50),
      maxMs: round(verdict.failoverFromFault.max),
      count: verdict.failoverFromFault.count,
    },
    slowestFailovers: verdict.slowestFailovers,
    midBatchFaultsInjected: context.injected,
    bank: context.bank,
    violations: settlementViolations(verdict, context),
  };
}
