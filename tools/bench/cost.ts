/**
 * Dollars per million executions at the price table's prices, from the
 * measured happy-path mix plus the heartbeats a job of a given length needs,
 * next to EventBridge Scheduler invoking the same Lambda.
 *
 * Lambda model: the worker invocations an execution takes (measured: the
 * worker's receives that returned messages, which is what an event source
 * mapping invokes with; sparse schedules take one each, a burst batches up to
 * 10), each billed for the wait for its slices' second (a message surfaces in
 * the second before it: half a second on average, shared by the batch), and
 * the handler's own run time once per execution (as if it ran alone: what
 * EventBridge Scheduler's Lambda pays too).
 *
 * Overhead is everything but the handler's own run time: DynamoDB, SQS,
 * events, Lambda requests and the wait (for EventBridge Scheduler: its fee
 * and its one Lambda request per execution).
 */
import { DEFAULT_START_PRECISION, type StartPrecision } from '../../lib/core/start-precision.ts';
import { CONSTRUCT_LAMBDA_MEMORY_MB, PRICE_TABLE, type PriceTable } from './price-table.ts';
import type { PerExecution } from './per-execution.ts';

/** The mean wait between a message surfacing and its slice's second. */
export const MEAN_WAIT_FOR_SECOND_S = 0.5;
/** That wait by the job's start precision: an `exact` job's message surfaces in the second before, a `within-second` one's at or after it (lib/core/start-precision.ts). */
export const MEAN_WAIT_FOR_START_S: Readonly<Record<StartPrecision, number>> = { exact: MEAN_WAIT_FOR_SECOND_S, 'within-second': 0 };
/**
 * Powertools for AWS Lambda idempotency writes an in-progress record
 * (conditional PutItem) and then the completed one (UpdateItem) per
 * execution, each under 1 KB: 2 WRU.
 */
export const POWERTOOLS_IDEMPOTENCY_WRU = 2;
/** Lambda memory sizes to choose the worker's from. */
export const LAMBDA_MEMORY_CHOICES_MB = [128, 256, 512, 1024] as const;
/** Headroom over the measured peak resident set. */
const MEMORY_HEADROOM = 1.25;

export interface LeaseSettings {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
}

export interface CostBreakdown {
  readonly dynamoWrites: number;
  readonly dynamoReads: number;
  readonly sqs: number;
  readonly lambdaRequests: number;
  /** Lambda GB-seconds spent waiting for the slice's second (cronfence's; overhead). */
  readonly lambdaWait: number;
  /** Lambda GB-seconds of the handler's own run time (both schedulers pay it). */
  readonly lambdaCompute: number;
  readonly events: number;
  readonly scheduler: number;
  readonly total: number;
  /** total − lambdaCompute: what scheduling costs beyond running the handler. */
  readonly overhead: number;
}

export interface HeartbeatCost {
  /** Write units of one lease renewal (the slice item is under 1 KB: 1). */
  readonly writeUnitsPerRenewal: number;
  /** SQS requests per heartbeat (the visibility extension; less than one when extensions share a batch). */
  readonly sqsRequestsPerHeartbeat: number;
}

export const DEFAULT_HEARTBEAT_COST: HeartbeatCost = { writeUnitsPerRenewal: 1, sqsRequestsPerHeartbeat: 1 };

export interface CostOptions {
  readonly heartbeat?: HeartbeatCost;
  readonly prices?: PriceTable;
  /** @default the construct's worker memory */
  readonly workerMemoryMb?: number;
  /** Worker invocations per execution. @default 1 (sparse schedules: one message per invocation) */
  readonly invocationsPerExecution?: number;
  /** The jobs' start precision, which decides the wait for the second when no measured wait is given. @default 'exact' */
  readonly startPrecision?: StartPrecision;
  /**
   * Seconds each invocation is billed before its handler starts, as measured (the sparse run's mean wait).
   * @default the modelled wait of `startPrecision` (MEAN_WAIT_FOR_START_S)
   */
  readonly waitSecondsPerInvocation?: number;
}

/** Renewals a job running `jobSeconds` makes: one per heartbeat interval it is still running. */
export function heartbeatsFor(jobSeconds: number, heartbeatMs: number): number {
  return Math.floor((jobSeconds * 1000) / heartbeatMs);
}

/** The smallest Lambda memory size that holds the measured peak resident set with headroom. */
export function chooseWorkerMemoryMb(peakRssMb: number): number {
  return LAMBDA_MEMORY_CHOICES_MB.find((size) => size >= peakRssMb * MEMORY_HEADROOM) ?? 1024;
}

export function cronfenceUsdPerMillion(
  happy: PerExecution,
  jobSeconds: number,
  lease: LeaseSettings,
  options: CostOptions = {},
): CostBreakdown {
  const prices = options.prices ?? PRICE_TABLE;
  const heartbeat = options.heartbeat ?? DEFAULT_HEARTBEAT_COST;
  const beats = heartbeatsFor(jobSeconds, lease.heartbeatMs);
  const gb = (options.workerMemoryMb ?? CONSTRUCT_LAMBDA_MEMORY_MB.worker) / 1024;
  const invocations = options.invocationsPerExecution ?? 1;
  const gbSecond = prices.lambdaArmGbSecond * 1e6;
  return withTotal({
    // happy.writeRequestUnits includes the index write units (billed as write units); renewals touch no index.
    dynamoWrites: (happy.writeRequestUnits + beats * heartbeat.writeUnitsPerRenewal) * prices.dynamoWriteRequestUnitPerMillion,
    dynamoReads: happy.readRequestUnits * prices.dynamoReadRequestUnitPerMillion,
    // Measured with the construct's queue visibility, so the claim-time visibility change is in happy.sqsRequests;
    // heartbeat extensions are not (they are the heartbeats' own, priced here per beat).
    sqs: (happy.sqsRequests + beats * heartbeat.sqsRequestsPerHeartbeat) * prices.sqsRequestPerMillion,
    lambdaRequests: invocations * prices.lambdaRequestPerMillion,
    lambdaWait:
      invocations *
      gb *
      (options.waitSecondsPerInvocation ?? MEAN_WAIT_FOR_START_S[options.startPrecision ?? DEFAULT_START_PRECISION]) *
      gbSecond,
    lambdaCompute: gb * jobSeconds * gbSecond,
    events: happy.eventEntries * prices.eventBridgeCustomEventPerMillion,
    scheduler: 0,
  });
}

/** EventBridge Scheduler invoking a Lambda of the same memory that runs `jobSeconds`; with Powertools idempotency's two writes if asked. */
export function schedulerUsdPerMillion(
  jobSeconds: number,
  options: { prices?: PriceTable; memoryMb?: number; idempotency?: boolean } = {},
): CostBreakdown {
  const prices = options.prices ?? PRICE_TABLE;
  const gb = (options.memoryMb ?? CONSTRUCT_LAMBDA_MEMORY_MB.worker) / 1024;
  return withTotal({
    dynamoWrites: options.idempotency ? POWERTOOLS_IDEMPOTENCY_WRU * prices.dynamoWriteRequestUnitPerMillion : 0,
    dynamoReads: 0,
    sqs: 0,
    // One invocation per execution, counted as overhead as cronfence's are.
    lambdaRequests: prices.lambdaRequestPerMillion,
    lambdaWait: 0,
    lambdaCompute: gb * jobSeconds * prices.lambdaArmGbSecond * 1e6,
    events: 0,
    scheduler: prices.eventBridgeSchedulerInvocationPerMillion,
  });
}

/** What heartbeats add per million runs of a `jobSeconds` job, for a lease/heartbeat pair. */
export function heartbeatUsdPerMillion(
  jobSeconds: number,
  lease: LeaseSettings,
  heartbeat = DEFAULT_HEARTBEAT_COST,
  prices: PriceTable = PRICE_TABLE,
): number {
  const beats = heartbeatsFor(jobSeconds, lease.heartbeatMs);
  return (
    beats *
    (heartbeat.writeUnitsPerRenewal * prices.dynamoWriteRequestUnitPerMillion +
      heartbeat.sqsRequestsPerHeartbeat * prices.sqsRequestPerMillion)
  );
}

function withTotal(parts: Omit<CostBreakdown, 'total' | 'overhead'>): CostBreakdown {
  const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
  const r = (n: number): number => Math.round(n * 10_000) / 10_000;
  return {
    dynamoWrites: r(parts.dynamoWrites),
    dynamoReads: r(parts.dynamoReads),
    sqs: r(parts.sqs),
    lambdaRequests: r(parts.lambdaRequests),
    lambdaWait: r(parts.lambdaWait),
    lambdaCompute: r(parts.lambdaCompute),
    events: r(parts.events),
    scheduler: r(parts.scheduler),
    total: r(total),
    overhead: r(total - parts.lambdaCompute),
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
