/**
 * The CronScheduler's props. Every optional prop states its default; the
 * values the Lambdas read go through the same `loadConfig` ranges as local
 * runs, checked at synth.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { JobSpecInput } from '../core/job-spec.ts';
import type { HandlerRegistry, JobHandler } from '../engine/define-job.ts';

export interface CronSchedulerAlarmProps {
  /** Create the CloudWatch alarms at all. @default true */
  readonly enabled?: boolean;
  /**
   * Every alarm (and its OK) notifies this topic. Without one the alarms change state in CloudWatch and reach nobody:
   * the synth warns (`cronfence:alarms-without-topic`; acknowledge it when you route alarms yourself).
   * @default no action, and a synth warning
   */
  readonly topic?: sns.ITopic;
  /**
   * The scheduler counts as stopped after this long without an invocation of the tick by its rule (TicksStopped) or
   * of the scanner (ScansStopped); whole minutes, missing data breaching. @default Duration.minutes(5)
   */
  readonly stoppedAfter?: Duration;
  /**
   * Alarm when the oldest work message is older than this. A work message's
   * age includes its DelaySeconds (up to the lookahead) and retry backoffs.
   * @default Duration.minutes(15), or the lookahead plus 5 minutes if that is longer
   */
  readonly oldestWorkMessageAge?: Duration;
}

/** Where the Lambdas write the engine's metrics (Powertools EMF; names and units in docs/cdk.md). */
export interface CronSchedulerMetricsProps {
  /** CloudWatch namespace. @default 'Cronfence' */
  readonly namespace?: string;
  /** Value of the one dimension, `service`, that tells installations in an account apart. @default `<stack name>/<construct id>` */
  readonly service?: string;
}

export interface CronSchedulerDashboardProps {
  /** @default a name CloudFormation generates */
  readonly dashboardName?: string;
  /** Period of each graphed data point. @default Duration.minutes(5) */
  readonly period?: Duration;
}

export interface CronSchedulerBatchProps {
  /** Messages per invocation. @default 10 for the worker, 1 for the scanner */
  readonly batchSize?: number;
  /** Most concurrent invocations the event source mapping starts (2..1000). @default no limit */
  readonly maxConcurrency?: number;
}

export interface CronSchedulerProps {
  /** Shards of the "due" index; one scan request per shard per minute. @default 8 */
  readonly shardCount?: number;
  /** Default lease of a job's claim (a job's own `policies.leaseMs` wins). @default Duration.seconds(4) */
  readonly lease?: Duration;
  /** Default lease renewal interval, at most half the lease. @default Duration.seconds(1) */
  readonly heartbeat?: Duration;
  /**
   * How far ahead a scan creates slices; must exceed the one-minute tick, at most 1 hour. Past 15 minutes (SQS's
   * longest delay) a slice's message surfaces early and a worker hides it again until its second: one more receive
   * and visibility change per slice, so that a midnight burst can be created before midnight on a new table
   * (docs/bench.md, "Pre-enqueueing a burst"). @default Duration.minutes(2)
   */
  readonly lookahead?: Duration;
  /** Slack before the sweep re-sends a live slice whose message may be lost. @default Duration.seconds(30) */
  readonly sweepGrace?: Duration;
  /** History of SKIPPED and MISSED slices (DynamoDB TTL on `expiresAt`); SUCCEEDED and DEAD slices, the ledger, are kept. @default Duration.days(30) */
  readonly sliceRetention?: Duration;
  /** Put `committed` events on the bus as well (one entry per execution); failures, dead, fenced-out, missed and skipped always go. @default false */
  readonly publishSucceededEvents?: boolean;
  /**
   * What happens to the four tables (jobs, wheel, slices with the ledger, chunks with the outbox) when the stack or
   * the construct is removed. Retained tables keep their generated names, so a later deploy of the same stack creates
   * new, empty tables beside them (docs/cdk.md, "Lifecycle"). @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * What happens to the functions' log groups and the lifecycle audit log group when the stack is removed. Their
   * names are generated, or end in the stack instance's id, so retained ones never block a redeploy.
   * @default the value of `removalPolicy`
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the four tables: DeleteTable is refused (from the console, the API, or a
   * CloudFormation delete) until it is turned off. Not with `removalPolicy: DESTROY`, which it would make fail.
   * @default true, unless `removalPolicy` is `RemovalPolicy.DESTROY`
   */
  readonly deletionProtection?: boolean;
  /** Point-in-time recovery on both tables. @default true */
  readonly pointInTimeRecovery?: boolean;
  /**
   * Pre-warm the tables (and their indexes) to serve this much at once (DynamoDB warm
   * throughput, billed once per change). A new on-demand table serves
   * 4,000 WRU/s at first; `npm run bench` prints what a midnight burst
   * needs (docs/bench.md, "Capacity plan"), e.g. `{ writeUnitsPerSecond: 40_000 }`.
   * @default none: the on-demand table's initial throughput
   */
  readonly warmThroughput?: { readonly writeUnitsPerSecond?: number; readonly readUnitsPerSecond?: number };
  /**
   * Customer managed key for the tables and queues. The event bus stays on
   * AWS-owned encryption.
   * @default AWS-owned keys (DynamoDB), SQS-managed SSE (queues)
   */
  readonly encryptionKey?: kms.IKey;
  /** @default alarms on, no SNS topic */
  readonly alarms?: CronSchedulerAlarmProps;
  /** @default namespace `Cronfence`, service `<stack name>/<construct id>` */
  readonly metrics?: CronSchedulerMetricsProps;
  /**
   * The outbox dispatcher: a Lambda every minute delivering the outbound requests chunked commits record
   * (`ctx.commitChunk(n, { outbox })`). `false` when no job records any, or you deliver them yourself
   * (`createOutboxHandler` from `cronfence/lambda`). @default true
   */
  readonly outboxDispatcher?: boolean;
  /** A CloudWatch dashboard of the installation; `false` for none. @default true */
  readonly dashboard?: boolean | CronSchedulerDashboardProps;
  /**
   * Your jobs module (absolute, or relative to the current directory), e.g.
   * `path.join(__dirname, '../src/cron-jobs.ts')`: it exports `defineJob`
   * handlers (or a `registry`). The worker Lambda is generated around it and
   * bundled with esbuild; the module is loaded at synth (in a child process)
   * to read its handler names, which `addJob` is checked against. Keep its
   * top level free of side effects. Not with `workerEntry` or `handlers`.
   * One of `jobs` and `workerEntry` is required: without either the synth fails, naming `jobs`.
   * @default none: then `workerEntry`
   */
  readonly jobs?: string;
  /**
   * Module whose `handler` export is the worker Lambda, for a worker that needs
   * more than `jobs` gives (`createJobsWorker` from `cronfence/lambda`, docs/cdk.md).
   * @default the worker generated around `jobs` (one of the two is required)
   */
  readonly workerEntry?: string;
  /**
   * The handlers a custom `workerEntry` can run, for validating `addJob` at
   * synth and at deploy.
   * @default the names `jobs` exports; unchecked with `workerEntry`
   */
  readonly handlers?: HandlerRegistry | readonly string[];
  /** Extra environment for the worker (a business table's name, say). @default none */
  readonly workerEnvironment?: Record<string, string>;
  /** Worker Lambda timeout; every job's `policies.timeoutMs` must fit in it with 10 s to spare. @default Duration.minutes(2) */
  readonly workerTimeout?: Duration;
  /**
   * Worker Lambda memory, for all of this scheduler's jobs. The default is
   * what `npm run bench` chooses from the deployed worker bundle's peak
   * resident set under a batch of 10, plus Lambda's runtime (docs/bench.md);
   * raise it for handlers that need more memory or CPU. @default 256
   */
  readonly workerMemorySize?: number;
  /**
   * Scanner Lambda timeout. A scan stops taking new pages after its budget (20 s) and then re-queues the rest of its
   * shard, so the timeout must be at least the budget plus 10 s, checked at synth. @default Duration.minutes(1)
   */
  readonly scannerTimeout?: Duration;
  /**
   * Reserved concurrency of the tick Lambda, so nothing else in the account (a burst of workers) can throttle the
   * clock; `false` for none (an account whose concurrency quota leaves no room to reserve: AWS keeps 100 unreserved).
   * @default 2
   */
  readonly tickReservedConcurrency?: number | false;
  /**
   * Reserved concurrency of the scanner Lambda (at least 2); the scan queue's event source mapping invokes at most
   * this many at once (its `maxConcurrency`, unless `scannerBatch.maxConcurrency` is lower). `false` for none.
   * @default shardCount, at least 2: every shard scanned at once
   */
  readonly scannerReservedConcurrency?: number | false;
  /** @default batch size 10, no concurrency limit */
  readonly workerBatch?: CronSchedulerBatchProps;
  /** @default batch size 1, maximum concurrency the scanner's reserved concurrency (none without one) */
  readonly scannerBatch?: CronSchedulerBatchProps;
  /** Retention of the functions' log groups, in days. @default 30 */
  readonly logRetentionDays?: number;
}

/** `scheduler.addJob(id, options)`: a job spec without its id; `handler` may be the `defineJob` result. */
export type AddJobOptions = Omit<JobSpecInput, 'id' | 'handler'> & { readonly handler: string | JobHandler };
