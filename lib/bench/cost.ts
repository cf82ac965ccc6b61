/**
 * Dollars per million executions at the price table's prices, from the
 * measured happy-path mix plus the heartbeats a job of a given length needs,
 * next to EventBridge Scheduler invoking the same Lambda.
 *
 * Lambda model: one worker invocation per execution (sparse schedules arrive
 * one message at a time; a burst batches up to 10, which is cheaper), billed
 * for the job plus the wait for its second (a message surfaces in the
 * second before the slice's second: half a second on average).
 */
import { sumValues } from '../local/request-meter.ts';
import { CONSTRUCT_LAMBDA_MEMORY_MB, PRICE_TABLE, type PriceTable } from './price-table.ts';
import type { PerExecution } from './per-execution.ts';

/** The mean wait between a message surfacing and its slice's second. */
export const MEAN_WAIT_FOR_SECOND_S = 0.5;

export interface LeaseSettings {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
}

export interface CostBreakdown {
  readonly dynamoWrites: number;
  readonly dynamoReads: number;
  readonly sqs: number;
  readonly lambdaRequests: number;
  readonly lambdaCompute: number;
  readonly events: number;
  readonly scheduler: number;
  readonly total: number;
}

export interface HeartbeatCost {
  /** Write units of one lease renewal (the slice item is under 1 KB: 1). */
  readonly writeUnitsPerRenewal: number;
  /** SQS requests per heartbeat (the visibility extension). */
  readonly sqsRequestsPerHeartbeat: number;
}

export const DEFAULT_HEARTBEAT_COST: HeartbeatCost = { writeUnitsPerRenewal: 1, sqsRequestsPerHeartbeat: 1 };

/** Renewals a job running `jobSeconds` makes: one per heartbeat interval it is still running. */
export function heartbeatsFor(jobSeconds: number, heartbeatMs: number): number {
  return Math.floor((jobSeconds * 1000) / heartbeatMs);
}

export function cronfenceUsdPerMillion(
  happy: PerExecution,
  jobSeconds: number,
  lease: LeaseSettings,
  options: { heartbeat?: HeartbeatCost; lambdaClaimVisibility?: number; prices?: PriceTable; workerMemoryMb?: number } = {},
): CostBreakdown {
  const prices = options.prices ?? PRICE_TABLE;
  const heartbeat = options.heartbeat ?? DEFAULT_HEARTBEAT_COST;
  const beats = heartbeatsFor(jobSeconds, lease.heartbeatMs);
  const gb = (options.workerMemoryMb ?? CONSTRUCT_LAMBDA_MEMORY_MB.worker) / 1024;
  // On Lambda the claim sets the message's visibility once (the event source forces it up to the function timeout).
  const sqsRequests = happy.sqsRequests + (options.lambdaClaimVisibility ?? 1) + beats * heartbeat.sqsRequestsPerHeartbeat;
  const parts = {
    // A write to a global secondary index is billed as write units too (renewals touch no index).
    dynamoWrites: (happy.writeRequestUnits + sumValues(happy.indexWriteUnits ?? {}) + beats * heartbeat.writeUnitsPerRenewal) * prices.dynamoWriteRequestUnitPerMillion,
    dynamoReads: happy.readRequestUnits * prices.dynamoReadRequestUnitPerMillion,
    sqs: sqsRequests * prices.sqsRequestPerMillion,
    lambdaRequests: 1 * prices.lambdaRequestPerMillion,
    lambdaCompute: gb * (jobSeconds + MEAN_WAIT_FOR_SECOND_S) * prices.lambdaArmGbSecond * 1e6,
    events: happy.eventEntries * prices.eventBridgeCustomEventPerMillion,
    scheduler: 0,
  };
  return withTotal(parts);
}

/** EventBridge Scheduler invoking a Lambda of the same memory that runs `jobSeconds`. */
export function schedulerUsdPerMillion(jobSeconds: number, options: { prices?: PriceTable; memoryMb?: number } = {}): CostBreakdown {
  const prices = options.prices ?? PRICE_TABLE;
  const gb = (options.memoryMb ?? CONSTRUCT_LAMBDA_MEMORY_MB.worker) / 1024;
  return withTotal({
    dynamoWrites: 0,
    dynamoReads: 0,
    sqs: 0,
    lambdaRequests: prices.lambdaRequestPerMillion,
    lambdaCompute: gb * jobSeconds * prices.lambdaArmGbSecond * 1e6,
    events: 0,
    scheduler: prices.eventBridgeSchedulerInvocationPerMillion,
  });
}

/** What heartbeats add per million runs of a `jobSeconds` job, for a lease/heartbeat pair. */
export function heartbeatUsdPerMillion(jobSeconds: number, lease: LeaseSettings, heartbeat = DEFAULT_HEARTBEAT_COST, prices: PriceTable = PRICE_TABLE): number {
  const beats = heartbeatsFor(jobSeconds, lease.heartbeatMs);
  return beats * (heartbeat.writeUnitsPerRenewal * prices.dynamoWriteRequestUnitPerMillion + heartbeat.sqsRequestsPerHeartbeat * prices.sqsRequestPerMillion);
}

function withTotal(parts: Omit<CostBreakdown, 'total'>): CostBreakdown {
  const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
  const r = (n: number): number => Math.round(n * 10_000) / 10_000;
  return {
    dynamoWrites: r(parts.dynamoWrites),
    dynamoReads: r(parts.dynamoReads),
    sqs: r(parts.sqs),
    lambdaRequests: r(parts.lambdaRequests),
    lambdaCompute: r(parts.lambdaCompute),
    events: r(parts.events),
    scheduler: r(parts.scheduler),
    total: r(total),
  };
}

/** Lease/heartbeat pairs worth pricing, with the failover each allows (a standby takes over within about one lease). */
export const LEASE_CHOICES: readonly LeaseSettings[] = [
  { leaseMs: 4000, heartbeatMs: 1000 },
  { leaseMs: 10_000, heartbeatMs: 2500 },
  { leaseMs: 20_000, heartbeatMs: 5000 },
  { leaseMs: 60_000, heartbeatMs: 15_000 },
  { leaseMs: 120_000, heartbeatMs: 30_000 },
];
