/**
 * Physical resource names and tunables, read from the environment. Locally
 * they default to `cronfence-*`; in Lambda the CDK construct sets each
 * variable. AWS endpoints are not configured here: the SDK reads the standard
 * `AWS_ENDPOINT_URL`, so moto, LocalStack and real AWS need no code change.
 */
import { DEAD_LETTER_QUEUE, EVENT_BUS_LOGICAL_NAME, JOBS_TABLE, LEDGER_TABLE, SCAN_QUEUE, SLICES_TABLE, WORK_QUEUE } from './schema.ts';
import { InvalidJobSpecError } from '../core/errors.ts';

export interface CronfenceConfig {
  readonly prefix: string;
  readonly jobsTable: string;
  readonly slicesTable: string;
  readonly ledgerTable: string;
  readonly workQueueName: string;
  readonly scanQueueName: string;
  readonly deadLetterQueueName: string;
  readonly eventBusName: string;
  /** @default 8 */
  readonly shardCount: number;
  /** How far ahead a scan creates slices. Must exceed the tick interval. @default 120000 */
  readonly lookaheadMs: number;
  /** Slack before the sweep re-sends a live slice. @default 30000 */
  readonly sweepGraceMs: number;
  /** History retention of final slices (DynamoDB TTL). @default 30 days */
  readonly sliceRetentionMs: number;
  /** Put `committed` events on the bus too (failures always go). @default true */
  readonly publishSucceededEvents: boolean;
  /**
   * The work queue's visibility timeout as deployed. When it is longer than a
   * job's lease (a Lambda consumer forces it up to the function timeout), the
   * worker shortens the message's visibility to the lease at claim, so a
   * worker that dies before its first heartbeat is still taken over within
   * the lease. @default the schema's 3000
   */
  readonly workQueueVisibilityMs: number;
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): CronfenceConfig {
  const prefix = env.CRONFENCE_PREFIX ?? 'cronfence';
  const name = (variable: string, logical: string): string => env[variable] ?? `${prefix}-${logical}`;
  return {
    prefix,
    jobsTable: name('CRONFENCE_JOBS_TABLE', JOBS_TABLE.logicalName),
    slicesTable: name('CRONFENCE_SLICES_TABLE', SLICES_TABLE.logicalName),
    ledgerTable: name('CRONFENCE_LEDGER_TABLE', LEDGER_TABLE.logicalName),
    workQueueName: name('CRONFENCE_WORK_QUEUE', WORK_QUEUE.logicalName),
    scanQueueName: name('CRONFENCE_SCAN_QUEUE', SCAN_QUEUE.logicalName),
    deadLetterQueueName: name('CRONFENCE_DEAD_LETTER_QUEUE', DEAD_LETTER_QUEUE.logicalName),
    eventBusName: name('CRONFENCE_EVENT_BUS', EVENT_BUS_LOGICAL_NAME),
    shardCount: intVar(env, 'CRONFENCE_SHARDS', 8, 1, 10_000),
    lookaheadMs: intVar(env, 'CRONFENCE_LOOKAHEAD_MS', 120_000, 10_000, 900_000),
    sweepGraceMs: intVar(env, 'CRONFENCE_SWEEP_GRACE_MS', 30_000, 1000, 3_600_000),
    sliceRetentionMs: intVar(env, 'CRONFENCE_SLICE_RETENTION_MS', 30 * 86_400_000, 60_000, 3650 * 86_400_000),
    publishSucceededEvents: env.CRONFENCE_PUBLISH_SUCCEEDED !== 'false',
    workQueueVisibilityMs: intVar(env, 'CRONFENCE_WORK_QUEUE_VISIBILITY_MS', WORK_QUEUE.visibilityTimeoutSeconds * 1000, 1000, 43_200_000),
  };
}

function intVar(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidJobSpecError(variable, raw, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}
