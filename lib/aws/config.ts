/**
 * All of cronfence's configuration: every `CRONFENCE_*` variable the product
 * reads is declared, parsed (zod) and documented here and nowhere else;
 * docs/configuration.md is the same table (a unit test keeps the two equal).
 * Locally the names default to `cronfence-*`; in Lambda the CDK construct
 * sets each variable. AWS endpoints are not configured here: the SDK reads
 * the standard `AWS_ENDPOINT_URL`, so moto, LocalStack and real AWS need no
 * code change.
 */
import { z } from 'zod';
import {
  CHUNKS_TABLE,
  DEAD_LETTER_QUEUE,
  EVENT_BUS_LOGICAL_NAME,
  JOBS_TABLE,
  SCAN_QUEUE,
  SLICES_TABLE,
  WHEEL_TABLE,
  WORK_QUEUE,
} from './schema.ts';
import { InvalidJobSpecError } from '../core/errors.ts';
import { MAX_LOOKAHEAD_MS } from '../core/advance-plan.ts';

type Env = Record<string, string | undefined>;

/** Who reads a variable: the engine's runtime (Lambda and local), local runs only, or the example jobs. */
export type VariableScope = 'runtime' | 'local' | 'example';

export interface VariableDoc {
  readonly scope: VariableScope;
  /** The default, as the table shows it. */
  readonly default: string;
  readonly description: string;
}

/** An empty value counts as unset. */
const unset = (value: unknown): unknown => (value === '' ? undefined : value);
const text = () => z.preprocess(unset, z.string().optional());
const whole = (fallback: number, min: number, max: number) =>
  z.preprocess(
    unset,
    z.coerce
      .number({ error: `must be a whole number from ${min} to ${max}` })
      .int(`must be a whole number from ${min} to ${max}`)
      .min(min, `must be a whole number from ${min} to ${max}`)
      .max(max, `must be a whole number from ${min} to ${max}`)
      .default(fallback),
  );

const DAY_MS = 86_400_000;
/** A default resource name, as the table shows it. */
const named = (logical: string): string => `\`<prefix>-${logical}\``;

/** Every variable: its parser and its documentation row. */
const VARIABLES = {
  CRONFENCE_PREFIX: [
    text(),
    {
      scope: 'runtime',
      default: 'cronfence',
      description: 'Prefix of every resource name below that is not set itself (`<prefix>-jobs`, ...).',
    },
  ],
  CRONFENCE_JOBS_TABLE: [
    text(),
    { scope: 'runtime', default: named(JOBS_TABLE.logicalName), description: 'The jobs table (set by the construct).' },
  ],
  CRONFENCE_WHEEL_TABLE: [
    text(),
    {
      scope: 'runtime',
      default: named(WHEEL_TABLE.logicalName),
      description: 'The timing wheel: which jobs each shard has due when (set by the construct).',
    },
  ],
  CRONFENCE_SLICES_TABLE: [
    text(),
    { scope: 'runtime', default: named(SLICES_TABLE.logicalName), description: 'The slices table (set by the construct).' },
  ],
  CRONFENCE_CHUNKS_TABLE: [
    text(),
    {
      scope: 'runtime',
      default: named(CHUNKS_TABLE.logicalName),
      description: 'Chunk records and outbox items of chunked slices (set by the construct).',
    },
  ],
  CRONFENCE_WORK_QUEUE: [text(), { scope: 'runtime', default: named(WORK_QUEUE.logicalName), description: "The work queue's name." }],
  CRONFENCE_SCAN_QUEUE: [text(), { scope: 'runtime', default: named(SCAN_QUEUE.logicalName), description: "The scan queue's name." }],
  CRONFENCE_DEAD_LETTER_QUEUE: [
    text(),
    { scope: 'runtime', default: named(DEAD_LETTER_QUEUE.logicalName), description: "The dead-letter queue's name." },
  ],
  CRONFENCE_WORK_QUEUE_URL: [
    text(),
    {
      scope: 'runtime',
      default: 'looked up by name',
      description: "The work queue's URL (set by the construct: saves a GetQueueUrl per cold start).",
    },
  ],
  CRONFENCE_SCAN_QUEUE_URL: [
    text(),
    { scope: 'runtime', default: 'looked up by name', description: "The scan queue's URL (set by the construct)." },
  ],
  CRONFENCE_DEAD_LETTER_QUEUE_URL: [
    text(),
    { scope: 'runtime', default: 'looked up by name', description: "The dead-letter queue's URL (set by the construct)." },
  ],
  CRONFENCE_EVENT_BUS: [
    text(),
    { scope: 'runtime', default: named(EVENT_BUS_LOGICAL_NAME), description: 'The EventBridge bus lifecycle events go to.' },
  ],
  CRONFENCE_SHARDS: [
    whole(8, 1, 10_000),
    { scope: 'runtime', default: '8', description: 'Shards of the schedule index; the tick queues one scan per shard (1 to 10000).' },
  ],
  CRONFENCE_LOOKAHEAD_MS: [
    whole(120_000, 10_000, MAX_LOOKAHEAD_MS),
    {
      scope: 'runtime',
      default: '120000',
      description:
        'How far ahead a scan sends occurrences; must exceed the tick interval (10000 to 3600000; past 900000 a message surfaces early and is hidden again until its second).',
    },
  ],
  CRONFENCE_SWEEP_GRACE_MS: [
    whole(30_000, 1000, 3_600_000),
    {
      scope: 'runtime',
      default: '30000',
      description:
        "Slack past an occurrence's start before the reconciler looks for its slice and the sweep re-sends a waiting one (1000 to 3600000).",
    },
  ],
  CRONFENCE_SLICE_RETENTION_MS: [
    whole(30 * DAY_MS, 60_000, 3650 * DAY_MS),
    {
      scope: 'runtime',
      default: '2592000000 (30 days)',
      description: 'History retention of SKIPPED and MISSED slices (DynamoDB TTL); SUCCEEDED and DEAD slices are the ledger and are kept.',
    },
  ],
  CRONFENCE_PUBLISH_SUCCEEDED: [
    text(),
    {
      scope: 'runtime',
      default: 'false',
      description:
        'Put `committed` events on the bus too (opt-in: one entry per execution, $1 per million); failures, dead, fenced-out, missed and skipped are always sent.',
    },
  ],
  CRONFENCE_WORK_QUEUE_VISIBILITY_MS: [
    whole(WORK_QUEUE.visibilityTimeoutSeconds * 1000, 1000, 43_200_000),
    {
      scope: 'runtime',
      default: `${WORK_QUEUE.visibilityTimeoutSeconds * 1000}`,
      description:
        "The work queue's visibility timeout as deployed; when it exceeds a lease, the worker shortens a message's visibility to the lease at claim.",
    },
  ],
  CRONFENCE_SCAN_BUDGET_MS: [
    whole(20_000, 1000, 900_000),
    {
      scope: 'runtime',
      default: '20000',
      description: 'How long one scan of a shard may take before it re-queues the rest of the shard (the scanner Lambda).',
    },
  ],
  CRONFENCE_DEAD_MAN_FACTOR: [
    whole(2, 1, 1000),
    {
      scope: 'runtime',
      default: '2',
      description:
        "Dead-man's switch: a job with no final slot within this many of its intervals is reported stale (1 to 1000; docs/operations.md).",
    },
  ],
  CRONFENCE_PER_JOB_METRICS: [
    text(),
    {
      scope: 'runtime',
      default: 'false',
      description: '`true`: also write StartLag per job (metric JobStartLag, dimension jobId): one billed custom metric per job.',
    },
  ],
  CRONFENCE_EMULATOR: [
    text(),
    { scope: 'local', default: 'moto', description: 'The local emulator profile: `moto`, or `localstack` (docs/localstack.md).' },
  ],
  CRONFENCE_STATE_DIR: [
    text(),
    { scope: 'local', default: '`.cronfence`', description: "Where `cronfence dev` keeps its state file and the replicas' log." },
  ],
  CRONFENCE_WORKER_BATCHES: [
    whole(16, 1, 256),
    {
      scope: 'local',
      default: '16',
      description: "SQS batches a local worker replica handles at once (Lambda's concurrency stand-in; the bench sets it).",
    },
  ],
  CRONFENCE_CHAOS: [
    text(),
    {
      scope: 'local',
      default: 'unset',
      description: "Set by `npm run chaos` for each replica it forks: that replica's faults, as JSON (tools/chaos/config.ts).",
    },
  ],
  CRONFENCE_ACTOR: [
    text(),
    {
      scope: 'local',
      default: '$USER',
      description: 'Who `cronfence jobs trigger|backfill|pause|resume` records as the actor when `--actor` is not given.',
    },
  ],
  CRONFENCE_PAYOUTS_TABLE: [
    text(),
    { scope: 'example', default: '`<prefix>-payouts`', description: 'The business table of the built-in example jobs (examples/jobs).' },
  ],
} as const satisfies Record<string, readonly [z.ZodType, VariableDoc]>;

export type VariableName = keyof typeof VARIABLES;

/** The documentation row of each variable, in declaration order. */
export const CONFIGURATION_TABLE: readonly (VariableDoc & { readonly name: VariableName })[] = Object.entries(VARIABLES).map(
  ([name, [, doc]]) => ({
    name: name as VariableName,
    ...doc,
  }),
);

const ENVIRONMENT = z.object(
  Object.fromEntries(Object.entries(VARIABLES).map(([name, [schema]]) => [name, schema])) as {
    [K in VariableName]: (typeof VARIABLES)[K][0];
  },
);
type Environment = z.infer<typeof ENVIRONMENT>;

/** @throws {InvalidJobSpecError} naming the first variable whose value is out of range. */
export function readEnvironment(env: Env = process.env): Environment {
  const parsed = ENVIRONMENT.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const variable = String(issue?.path[0] ?? 'environment');
  throw new InvalidJobSpecError(variable, env[variable], issue?.message ?? 'invalid');
}

/** What the engine's runtime needs, in Lambda and locally. */
export interface CronfenceConfig {
  readonly prefix: string;
  readonly jobsTable: string;
  readonly wheelTable: string;
  readonly slicesTable: string;
  readonly chunksTable: string;
  readonly workQueueName: string;
  readonly scanQueueName: string;
  readonly deadLetterQueueName: string;
  /** The queues' URLs when known (set by the construct); looked up by name otherwise. */
  readonly queueUrls: { readonly work?: string; readonly scan?: string; readonly deadLetter?: string };
  readonly eventBusName: string;
  /** @default 8 */
  readonly shardCount: number;
  /** How far ahead a scan sends occurrences. Must exceed the tick interval. @default 120000 */
  readonly lookaheadMs: number;
  /** Slack past an occurrence's start before the reconciler looks for it, and before the sweep re-sends a waiting slice. @default 30000 */
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
  /** How long one scan may take before it re-queues the rest of its shard. @default 20000 */
  readonly scanBudgetMs: number;
  /** Dead-man's switch: no final slot within this many intervals is stale (core/dead-man.ts). @default 2 */
  readonly deadManFactor: number;
  /** Write StartLag per job too (JobStartLag, dimension jobId). @default false */
  readonly perJobMetrics: boolean;
}

/** @throws {InvalidJobSpecError} naming a variable whose value is out of range. */
export function loadConfig(env: Env = process.env): CronfenceConfig {
  const e = readEnvironment(env);
  const prefix = e.CRONFENCE_PREFIX ?? 'cronfence';
  const name = (value: string | undefined, logical: string): string => value ?? `${prefix}-${logical}`;
  return {
    prefix,
    jobsTable: name(e.CRONFENCE_JOBS_TABLE, JOBS_TABLE.logicalName),
    wheelTable: name(e.CRONFENCE_WHEEL_TABLE, WHEEL_TABLE.logicalName),
    slicesTable: name(e.CRONFENCE_SLICES_TABLE, SLICES_TABLE.logicalName),
    chunksTable: name(e.CRONFENCE_CHUNKS_TABLE, CHUNKS_TABLE.logicalName),
    workQueueName: name(e.CRONFENCE_WORK_QUEUE, WORK_QUEUE.logicalName),
    scanQueueName: name(e.CRONFENCE_SCAN_QUEUE, SCAN_QUEUE.logicalName),
    deadLetterQueueName: name(e.CRONFENCE_DEAD_LETTER_QUEUE, DEAD_LETTER_QUEUE.logicalName),
    queueUrls: { work: e.CRONFENCE_WORK_QUEUE_URL, scan: e.CRONFENCE_SCAN_QUEUE_URL, deadLetter: e.CRONFENCE_DEAD_LETTER_QUEUE_URL },
    eventBusName: name(e.CRONFENCE_EVENT_BUS, EVENT_BUS_LOGICAL_NAME),
    shardCount: e.CRONFENCE_SHARDS,
    lookaheadMs: e.CRONFENCE_LOOKAHEAD_MS,
    sweepGraceMs: e.CRONFENCE_SWEEP_GRACE_MS,
    sliceRetentionMs: e.CRONFENCE_SLICE_RETENTION_MS,
    publishSucceededEvents: e.CRONFENCE_PUBLISH_SUCCEEDED === 'true',
    workQueueVisibilityMs: e.CRONFENCE_WORK_QUEUE_VISIBILITY_MS,
    scanBudgetMs: e.CRONFENCE_SCAN_BUDGET_MS,
    deadManFactor: e.CRONFENCE_DEAD_MAN_FACTOR,
    perJobMetrics: e.CRONFENCE_PER_JOB_METRICS === 'true',
  };
}

/** Who an operator action is recorded as: `flag`, else CRONFENCE_ACTOR, else USER (LOGNAME, USERNAME), else "unknown". */
export function operatorActor(flag?: string, env: Env = process.env): string {
  const candidates = [flag, readEnvironment(env).CRONFENCE_ACTOR, env.USER, env.LOGNAME, env.USERNAME];
  return candidates.find((name) => name !== undefined && name.trim() !== '') ?? 'unknown';
}

/** What only local runs (`cronfence dev`, the drill, the bench) read. */
export interface LocalConfig {
  /** The emulator profile's name as given (lib/local/emulator.ts checks it). @default moto */
  readonly emulator: string | undefined;
  /** @default .cronfence */
  readonly stateDir: string;
  /** SQS batches a local worker replica handles at once. @default 16 */
  readonly workerBatches: number;
  /** A chaos replica's faults, as JSON (set by the drill). */
  readonly chaos: string | undefined;
}

export function localConfig(env: Env = process.env): LocalConfig {
  const e = readEnvironment(env);
  return {
    emulator: e.CRONFENCE_EMULATOR,
    stateDir: e.CRONFENCE_STATE_DIR ?? '.cronfence',
    workerBatches: e.CRONFENCE_WORKER_BATCHES,
    chaos: e.CRONFENCE_CHAOS,
  };
}

/** The example jobs' payouts table (examples/jobs): CRONFENCE_PAYOUTS_TABLE, else `<prefix>-payouts`. */
export function examplePayoutsTable(prefix?: string, env: Env = process.env): string {
  const e = readEnvironment(env);
  return e.CRONFENCE_PAYOUTS_TABLE ?? `${prefix ?? e.CRONFENCE_PREFIX ?? 'cronfence'}-payouts`;
}
