/**
 * Requests per execution: a meter snapshot of a burst divided by the
 * executions it committed. Heartbeats and empty receives are reported apart
 * (the targets exclude them: heartbeats depend on how long a job runs, empty
 * receives on how long pollers sit idle).
 */
import { sumValues, type MeterSnapshot } from '../meter/request-meter.ts';
import { round } from './density.ts';

export interface PerExecution {
  /** PutItem/UpdateItem/DeleteItem/BatchWriteItem and TransactWriteItems requests, heartbeats excluded. */
  readonly dynamoWriteRequests: number;
  readonly dynamoReadRequests: number;
  readonly transactWriteRequests: number;
  readonly transactItems: number;
  /** All write request units DynamoDB bills: the base tables' plus the indexes', heartbeats excluded. */
  readonly writeRequestUnits: number;
  /** Base-table write request units (1 KB each, doubled in a transaction), heartbeats excluded. */
  readonly baseWriteRequestUnits: number;
  /** Read request units (4 KB each; half eventually consistent; double in a transaction). */
  readonly readRequestUnits: number;
  /** GSI write units, by index; the sweep index is keyed by shard. */
  readonly indexWriteUnits: Record<string, number>;
  /** Write units on the wheel table (its partitions are the shards): the scanners' packed entries and cursor moves. */
  readonly wheelWriteUnits: number;
  /**
   * Sends, non-empty receives, deletes and the claims' visibility changes: the happy path, heartbeats excluded (as
   * for DynamoDB: a heartbeat's extension is `sqsExtensions`, priced with the heartbeats).
   */
  readonly sqsRequests: number;
  readonly sqsSends: number;
  readonly sqsReceives: number;
  readonly sqsDeletes: number;
  readonly sqsVisibilityChanges: number;
  /** Single ChangeMessageVisibility requests: heartbeats' extensions (and holds off the happy path). */
  readonly sqsExtensions: number;
  readonly emptyReceives: number;
  readonly heartbeats: number;
  readonly eventRequests: number;
  readonly eventEntries: number;
  /** Worker and scanner ReceiveMessage calls that returned messages: what Lambda invocations an event source mapping would make. */
  readonly receivesWithMessages: number;
}

export function perExecution(meter: MeterSnapshot, executions: number): PerExecution {
  const per = (n: number): number => (executions === 0 ? 0 : round(n / executions, 4));
  const k = meter.kinds;
  return {
    dynamoWriteRequests: per(k.dynamoWrite + k.dynamoTransactWrite),
    dynamoReadRequests: per(k.dynamoRead),
    transactWriteRequests: per(k.dynamoTransactWrite),
    transactItems: per(meter.transactItems),
    writeRequestUnits: per(meter.writeUnits.dynamoWrite + meter.writeUnits.dynamoTransactWrite + sumValues(meter.indexWriteUnits)),
    baseWriteRequestUnits: per(meter.writeUnits.dynamoWrite + meter.writeUnits.dynamoTransactWrite),
    readRequestUnits: per(sumValues(meter.readUnits)),
    indexWriteUnits: Object.fromEntries(Object.entries(meter.indexWriteUnits).map(([index, units]) => [index, per(units)])),
    wheelWriteUnits: per(meter.tableWriteUnits.wheel ?? 0),
    sqsRequests: per(k.sqsSend + k.sqsReceive + k.sqsDelete + k.sqsVisibility),
    sqsSends: per(k.sqsSend),
    sqsReceives: per(k.sqsReceive),
    sqsDeletes: per(k.sqsDelete),
    sqsVisibilityChanges: per(k.sqsVisibility),
    sqsExtensions: per(k.sqsExtension),
    emptyReceives: per(k.sqsReceiveEmpty),
    heartbeats: per(k.heartbeat),
    eventRequests: per(k.event),
    eventEntries: per(meter.eventEntries),
    receivesWithMessages: per(k.sqsReceive),
  };
}

/** Rows for the terminal: request by service.Operation, count, per execution. */
export function requestRows(meter: MeterSnapshot, executions: number): (string | number)[][] {
  return Object.entries(meter.requests)
    .filter(([, count]) => count > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, count]) => [name, count, executions === 0 ? '-' : (count / executions).toFixed(3)]);
}

/** `a + k × b`, field by field, never below 0: to take a fixed part (per scan, say) out of a figure or put one in. */
export function addScaled(a: PerExecution, b: PerExecution, k: number): PerExecution {
  const sum = (x: number, y: number): number => Math.max(0, round(x + k * y, 4));
  const indexes = new Set([...Object.keys(a.indexWriteUnits), ...Object.keys(b.indexWriteUnits)]);
  const out: Record<string, unknown> = {
    indexWriteUnits: Object.fromEntries([...indexes].map((i) => [i, sum(a.indexWriteUnits[i] ?? 0, b.indexWriteUnits[i] ?? 0)])),
  };
  for (const key of Object.keys(a) as (keyof PerExecution)[]) {
    if (key !== 'indexWriteUnits') out[key] = sum(a[key], b[key]);
  }
  return out as unknown as PerExecution;
}
