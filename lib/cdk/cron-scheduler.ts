/**
 * CronScheduler: a whole cronfence installation in one construct — the
 * tables and queues of lib/aws/schema.ts, the lifecycle bus, the per-minute
 * rule, the tick / scanner / worker Lambdas with their event sources and
 * least-privilege roles, alarms, a dashboard, and `addJob` for jobs declared in the stack.
 *
 * ```ts
 * const scheduler = new CronScheduler(stack, 'Cron', { shardCount: 4, jobs: path.join(__dirname, '../src/cron-jobs.ts') });
 * scheduler.addJob('nightly-report', { schedule: '0 2 * * *', timeZone: 'Europe/Berlin', handler: 'nightly-report' });
 * scheduler.grantCommit(reportsTable);
 * ```
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { loadConfig, type CronfenceConfig } from '../aws/config.ts';
import { CHUNKS_TABLE, DEAD_LETTER_QUEUE, JOBS_TABLE, SCAN_QUEUE, SLICES_TABLE, WHEEL_TABLE, WORK_QUEUE } from '../aws/schema.ts';
import { MAX_LOOKAHEAD_MS } from '../core/advance-plan.ts';
import { InvalidJobSpecError, InvalidSchedulerPropError } from '../core/errors.ts';
import { parseJobSpec, type JobSpec } from '../core/job-spec.ts';
import { SchedulerAlarms } from './alarms.ts';
import { SchedulerDashboard } from './dashboard.ts';
import { checkScannerTimeout, clockConcurrency } from './clock-functions.ts';
import { cronfenceFunction, ENTRIES, retentionDays } from './functions.ts';
import { prepareJobsWorker, type JobsWorker } from './jobs-worker.ts';
import { lifecycleOf } from './lifecycle.ts';
import { addOutboxDispatcher } from './outbox-dispatcher.ts';
import { grantBusinessWrites, grantJobsResource, grantScanner, grantTick, grantWorker, type SchedulerResources } from './permissions.ts';
import type { AddJobOptions, CronSchedulerProps } from './props.ts';
import { SchedulerMetrics } from './scheduler-metrics.ts';
import { effectiveVisibilitySeconds, queueProps, schemaTable } from './schema-resources.ts';
import { DEFAULT_METRICS_NAMESPACE } from '../lambda/metric-names.ts';
import { ScheduledJob } from './scheduled-job.ts';

/** Room a worker invocation needs beyond a job's own timeout (early surfacing, claim, commit). */
export const WORKER_TIMEOUT_SLACK = Duration.seconds(10);
const TICK_INTERVAL = Duration.minutes(1);

export class CronScheduler extends Construct {
  readonly jobsTable: dynamodb.Table;
  /** The timing wheel: which jobs each shard has due when (core/wheel.ts). */
  readonly wheelTable: dynamodb.Table;
  readonly slicesTable: dynamodb.Table;
  /** Chunk records and outbox items of chunked slices (`ctx.commitChunk`). */
  readonly chunksTable: dynamodb.Table;
  readonly deadLetterQueue: sqs.Queue;
  readonly workQueue: sqs.Queue;
  readonly scanQueue: sqs.Queue;
  readonly eventBus: events.EventBus;
  readonly tickRule: events.Rule;
  readonly tickFunction: lambda.Function;
  /** The outbox dispatcher and its per-minute rule (outbox-dispatcher.ts); undefined with `outboxDispatcher: false`. */
  readonly outboxFunction?: lambda.Function;
  readonly outboxRule?: events.Rule;
  readonly scannerFunction: lambda.Function;
  readonly workerFunction: lambda.Function;
  /** Undefined when `alarms.enabled` is false. */
  readonly alarms?: SchedulerAlarms;
  /** Undefined when `dashboard` is false. */
  readonly dashboard?: SchedulerDashboard;
  /** The engine's metrics as the Lambdas write them (namespace, `service` dimension), for your own alarms and widgets. */
  readonly metrics: SchedulerMetrics;
  /** The configuration the Lambdas load, validated at synth. */
  readonly config: CronfenceConfig;
  /** Handler names jobs are checked against; undefined when unknown (custom `workerEntry` without `handlers`). */
  readonly knownHandlers?: readonly string[];
  readonly workerTimeout: Duration;

  private readonly props: CronSchedulerProps;
  private readonly resources: SchedulerResources;
  private readonly environment: Record<string, string>;
  private readonly jobs = new Map<string, ScheduledJob>();
  private jobsProvider?: cr.Provider;

  constructor(scope: Construct, id: string, props: CronSchedulerProps) {
    super(scope, id);
    this.props = props;
    const lifecycle = lifecycleOf(props);
    const logRetentionDays = props.logRetentionDays ?? 30;
    this.workerTimeout = props.workerTimeout ?? Duration.minutes(2);
    const scannerTimeout = props.scannerTimeout ?? Duration.minutes(1);
    const worker = workerOf(this.node.path, props);
    this.knownHandlers = worker.handlers ?? knownHandlerNames(props);

    const tableOptions = {
      removalPolicy: lifecycle.tables,
      deletionProtection: lifecycle.deletionProtection,
      pointInTimeRecovery: props.pointInTimeRecovery ?? true,
      encryptionKey: props.encryptionKey,
      warmThroughput: props.warmThroughput,
    };
    this.jobsTable = schemaTable(this, 'Jobs', JOBS_TABLE, tableOptions);
    this.wheelTable = schemaTable(this, 'Wheel', WHEEL_TABLE, tableOptions);
    this.slicesTable = schemaTable(this, 'Slices', SLICES_TABLE, tableOptions);
    this.chunksTable = schemaTable(this, 'Chunks', CHUNKS_TABLE, tableOptions);

    const encryptionKey = props.encryptionKey;
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', queueProps(DEAD_LETTER_QUEUE, { encryptionKey }));
    const deadLetterQueue = this.deadLetterQueue;
    this.workQueue = new sqs.Queue(
      this,
      'WorkQueue',
      queueProps(WORK_QUEUE, { consumerTimeout: this.workerTimeout, deadLetterQueue, encryptionKey }),
    );
    this.scanQueue = new sqs.Queue(
      this,
      'ScanQueue',
      queueProps(SCAN_QUEUE, { consumerTimeout: scannerTimeout, deadLetterQueue, encryptionKey }),
    );
    this.eventBus = new events.EventBus(this, 'Events', { description: 'cronfence lifecycle events (source "cronfence")' });

    this.resources = {
      jobs: this.jobsTable,
      wheel: this.wheelTable,
      slices: this.slicesTable,
      chunks: this.chunksTable,
      workQueue: this.workQueue,
      scanQueue: this.scanQueue,
      deadLetterQueue,
      bus: this.eventBus,
      encryptionKey,
    };
    this.metrics = new SchedulerMetrics(
      props.metrics?.namespace ?? DEFAULT_METRICS_NAMESPACE,
      props.metrics?.service ?? `${Stack.of(this).stackName}/${id}`,
    );
    this.environment = { ...schedulerSettings(props), ...this.resourceEnvironment(), ...this.metrics.environment() };
    // The same parser and ranges as a local run: a bad value fails the synth, naming the variable.
    this.config = loadConfig(this.environment);
    checkScannerTimeout(scannerTimeout, this.config.scanBudgetMs);
    const concurrency = clockConcurrency(props, this.config.shardCount);
    const common = { logRetentionDays, removalPolicy: lifecycle.logs };

    this.tickFunction = cronfenceFunction(this, 'Tick', {
      ...common,
      entry: ENTRIES.tick,
      description: 'cronfence tick: one scan request per shard',
      timeout: Duration.seconds(30),
      memorySize: 256,
      reservedConcurrency: concurrency.tick,
      environment: this.environment,
    });
    grantTick(this.tickFunction, this.resources);
    this.tickRule = new events.Rule(this, 'TickRule', {
      description: 'cronfence: the per-minute tick',
      schedule: events.Schedule.rate(TICK_INTERVAL),
      targets: [new targets.LambdaFunction(this.tickFunction, { retryAttempts: 2, maxEventAge: TICK_INTERVAL })],
    });

    this.scannerFunction = cronfenceFunction(this, 'Scanner', {
      ...common,
      entry: ENTRIES.scanner,
      description: 'cronfence scanner: turns due schedules into slices',
      timeout: scannerTimeout,
      memorySize: 512,
      reservedConcurrency: concurrency.scanner,
      environment: this.environment,
    });
    grantScanner(this.scannerFunction, this.resources);
    this.scannerFunction.addEventSource(
      new SqsEventSource(this.scanQueue, {
        batchSize: props.scannerBatch?.batchSize ?? 1,
        maxConcurrency: concurrency.scannerMapping,
        reportBatchItemFailures: true,
      }),
    );

    this.workerFunction = cronfenceFunction(this, 'Worker', {
      ...common,
      entry: worker.entry,
      project: worker.project,
      description: 'cronfence worker: claims, runs and commits slices',
      timeout: this.workerTimeout,
      memorySize: props.workerMemorySize ?? 256,
      environment: { ...this.environment, ...props.workerEnvironment },
    });
    grantWorker(this.workerFunction, this.resources);
    this.workerFunction.addEventSource(
      new SqsEventSource(this.workQueue, {
        batchSize: props.workerBatch?.batchSize ?? 10,
        maxConcurrency: props.workerBatch?.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    if (props.outboxDispatcher ?? true) {
      ({ outboxFunction: this.outboxFunction, outboxRule: this.outboxRule } = addOutboxDispatcher(this, {
        ...common,
        resources: this.resources,
        environment: this.environment,
      }));
    }

    if (props.alarms?.enabled ?? true) {
      this.alarms = new SchedulerAlarms(this, 'Alarms', {
        functions: { Tick: this.tickFunction, Scanner: this.scannerFunction, Worker: this.workerFunction },
        tables: { Jobs: this.jobsTable, Wheel: this.wheelTable, Slices: this.slicesTable },
        workQueue: this.workQueue,
        deadLetterQueue,
        bus: this.eventBus,
        tickRule: this.tickRule,
        stoppedAfter: props.alarms?.stoppedAfter ?? Duration.minutes(5),
        oldestWorkMessageAge: props.alarms?.oldestWorkMessageAge ?? defaultOldestWorkMessageAge(lookaheadOf(props)),
        metrics: this.metrics,
        topic: props.alarms?.topic,
        removalPolicy: lifecycle.logs,
        logRetention: retentionDays(logRetentionDays),
      });
    }
    if (props.dashboard !== false) {
      const options = typeof props.dashboard === 'object' ? props.dashboard : {};
      this.dashboard = new SchedulerDashboard(this, 'Dashboard', {
        ...options,
        metrics: this.metrics,
        functions: { Tick: this.tickFunction, Scanner: this.scannerFunction, Worker: this.workerFunction },
        tables: { Jobs: this.jobsTable, Wheel: this.wheelTable, Slices: this.slicesTable },
        deadLetterQueue,
      });
    }
  }

  /**
   * Declares a job, validated now with the same `parseJobSpec` as the CLI
   * and written to the jobs table at deploy time.
   * @throws {InvalidJobSpecError} naming the bad field and value (a bad cron, zone, handler or policy).
   * @throws {Error} when a job with this id was already added.
   */
  addJob(id: string, options: AddJobOptions): ScheduledJob {
    if (this.jobs.has(id)) throw new Error(`CronScheduler ${this.node.path}: job ${JSON.stringify(id)} is added twice`);
    const spec = this.parseJob(id, options);
    const job = new ScheduledJob(this, `Job-${id}`, {
      serviceToken: this.provider().serviceToken,
      spec,
      shardCount: this.config.shardCount,
      knownHandlers: this.knownHandlers,
    });
    this.jobs.set(id, job);
    return job;
  }

  /** The jobs declared with addJob, by id. */
  get declaredJobs(): ReadonlyMap<string, ScheduledJob> {
    return this.jobs;
  }

  /** Lets handlers write `table` inside their commit transaction (`ctx.commit`). */
  grantCommit(table: dynamodb.ITable): void {
    grantBusinessWrites(this.workerFunction, table);
  }

  private parseJob(id: string, options: AddJobOptions): JobSpec {
    const handler = typeof options.handler === 'string' ? options.handler : options.handler.name;
    const defaults = {
      ...(this.props.lease && { leaseMs: this.props.lease.toMilliseconds() }),
      ...(this.props.heartbeat && { heartbeatMs: this.props.heartbeat.toMilliseconds() }),
    };
    // origin "cdk": the stack owns it; a job created at run time under this id is refused, never replaced.
    const spec = parseJobSpec(
      { ...options, id, handler, origin: 'cdk', policies: { ...defaults, ...options.policies } },
      { knownHandlers: this.knownHandlers },
    );
    const limit = this.workerTimeout.toMilliseconds() - WORKER_TIMEOUT_SLACK.toMilliseconds();
    if (spec.policies.timeoutMs > limit) {
      throw new InvalidJobSpecError(
        'policies.timeoutMs',
        spec.policies.timeoutMs,
        `must be at most ${limit} (the worker Lambda's timeout, ${this.workerTimeout.toHumanString()}, less ${WORKER_TIMEOUT_SLACK.toHumanString()}); raise workerTimeout`,
      );
    }
    return spec;
  }

  private provider(): cr.Provider {
    if (this.jobsProvider) return this.jobsProvider;
    const onEvent = cronfenceFunction(this, 'JobsResource', {
      entry: ENTRIES.jobsResource,
      description: 'cronfence: writes jobs declared in the stack to the jobs table',
      timeout: Duration.minutes(2),
      memorySize: 256,
      environment: this.environment,
      logRetentionDays: this.props.logRetentionDays ?? 30,
      removalPolicy: lifecycleOf(this.props).logs,
    });
    grantJobsResource(onEvent, this.resources);
    this.jobsProvider = new cr.Provider(this, 'JobsProvider', { onEventHandler: onEvent });
    return this.jobsProvider;
  }

  private resourceEnvironment(): Record<string, string> {
    return {
      CRONFENCE_JOBS_TABLE: this.jobsTable.tableName,
      CRONFENCE_WHEEL_TABLE: this.wheelTable.tableName,
      CRONFENCE_SLICES_TABLE: this.slicesTable.tableName,
      CRONFENCE_CHUNKS_TABLE: this.chunksTable.tableName,
      CRONFENCE_WORK_QUEUE: this.workQueue.queueName,
      CRONFENCE_SCAN_QUEUE: this.scanQueue.queueName,
      CRONFENCE_DEAD_LETTER_QUEUE: this.deadLetterQueue.queueName,
      CRONFENCE_WORK_QUEUE_URL: this.workQueue.queueUrl,
      CRONFENCE_SCAN_QUEUE_URL: this.scanQueue.queueUrl,
      CRONFENCE_DEAD_LETTER_QUEUE_URL: this.deadLetterQueue.queueUrl,
      CRONFENCE_EVENT_BUS: this.eventBus.eventBusName,
      // Longer than the lease here (it must cover the worker's timeout), so workers shorten it at claim.
      CRONFENCE_WORK_QUEUE_VISIBILITY_MS: String(effectiveVisibilitySeconds(WORK_QUEUE, this.workerTimeout) * 1000),
    };
  }
}

/** The `lookahead` prop, checked against the tick and the longest lookahead the engine accepts. */
function lookaheadOf(props: CronSchedulerProps): Duration {
  const lookahead = props.lookahead ?? Duration.minutes(2);
  if (lookahead.toMilliseconds() <= TICK_INTERVAL.toMilliseconds()) {
    throw new InvalidJobSpecError(
      'lookahead',
      lookahead.toHumanString(),
      'must exceed the one-minute tick, or occurrences fall between scans',
    );
  }
  if (lookahead.toMilliseconds() > MAX_LOOKAHEAD_MS) {
    throw new InvalidJobSpecError(
      'lookahead',
      lookahead.toHumanString(),
      `must be at most ${Duration.millis(MAX_LOOKAHEAD_MS).toHumanString()}`,
    );
  }
  return lookahead;
}

/** A slice's message waits on the queue for up to the lookahead before it is due: that age is not a backlog. */
function defaultOldestWorkMessageAge(lookahead: Duration): Duration {
  return Duration.millis(
    Math.max(Duration.minutes(15).toMilliseconds(), lookahead.toMilliseconds() + Duration.minutes(5).toMilliseconds()),
  );
}

/** The tunables as the environment variables lib/aws/config.ts reads. */
function schedulerSettings(props: CronSchedulerProps): Record<string, string> {
  const lookahead = lookaheadOf(props);
  return {
    CRONFENCE_SHARDS: String(props.shardCount ?? 8),
    CRONFENCE_LOOKAHEAD_MS: String(lookahead.toMilliseconds()),
    CRONFENCE_SWEEP_GRACE_MS: String((props.sweepGrace ?? Duration.seconds(30)).toMilliseconds()),
    CRONFENCE_SLICE_RETENTION_MS: String((props.sliceRetention ?? Duration.days(30)).toMilliseconds()),
    CRONFENCE_PUBLISH_SUCCEEDED: String(props.publishSucceededEvents ?? false),
  };
}

/**
 * What the worker Lambda runs: your jobs module, or a worker entry of your own; there is no default. `jobs` replaces
 * both `workerEntry` and `handlers`: the generated worker runs the module, whose names are read at synth.
 * @throws {InvalidSchedulerPropError} (field `jobs`) when neither is given.
 */
function workerOf(constructPath: string, props: CronSchedulerProps): Pick<JobsWorker, 'entry'> & Partial<JobsWorker> {
  if (props.jobs === undefined) {
    if (props.workerEntry !== undefined) return { entry: props.workerEntry };
    throw new InvalidSchedulerPropError(
      'jobs',
      undefined,
      `CronScheduler ${constructPath} needs the jobs its worker runs: give \`jobs\` (the path of your jobs module) or \`workerEntry\` (a worker entry of your own, with \`handlers\`)`,
    );
  }
  const clash = (['workerEntry', 'handlers'] as const).find((name) => props[name] !== undefined);
  if (clash)
    throw new InvalidJobSpecError(
      clash,
      String(props[clash]),
      'give either `jobs` (your jobs module) or `workerEntry` with `handlers`, not both',
    );
  if (typeof props.jobs !== 'string' || props.jobs === '')
    throw new InvalidJobSpecError('jobs', props.jobs, 'must be the path of your jobs module');
  return prepareJobsWorker(constructPath, props.jobs);
}

function knownHandlerNames(props: CronSchedulerProps): readonly string[] | undefined {
  // A shape check, not instanceof: the registry may come from the other build (ESM / CommonJS) of cronfence.
  if (props.handlers && 'names' in props.handlers && typeof props.handlers.names === 'function') return props.handlers.names();
  if (props.handlers) return [...(props.handlers as readonly string[])];
  return undefined;
}
