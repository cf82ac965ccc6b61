import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { InvalidJobSpecError, InvalidSchedulerPropError } from '../../lib/core/errors.ts';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { CONSTRUCT_WORK_QUEUE_VISIBILITY_MS } from '../../tools/bench/price-table.ts';
import { logicalIdOf, resourcesOf, synthScheduler, testApp, EXAMPLE_WORKER } from './synth.ts';

const { template, scheduler } = synthScheduler();

describe('CronScheduler worker', () => {
  it('has no default jobs: without `jobs` or `workerEntry` the synth fails, naming `jobs`', () => {
    const synth = (props: ConstructorParameters<typeof CronScheduler>[2]) => () =>
      new CronScheduler(new Stack(testApp(), 'NoJobs'), 'Cron', props);
    expect(synth({})).toThrow(InvalidSchedulerPropError);
    expect(synth({ shardCount: 4 })).toThrow(
      /invalid jobs .*CronScheduler NoJobs\/Cron needs the jobs its worker runs: give `jobs` \(the path of your jobs module\) or `workerEntry`/,
    );
    // `handlers` alone names the jobs but runs none.
    expect(synth({ handlers: EXAMPLE_WORKER.handlers })).toThrow(/invalid jobs/);
    expect(synth({ workerEntry: EXAMPLE_WORKER.workerEntry })).not.toThrow();
  });
});

describe('CronScheduler tables', () => {
  it('builds the jobs table keyed by job id, with no index: no scan writes a job', () => {
    const jobs = template.toJSON().Resources[logicalIdOf(scheduler.jobsTable)].Properties;
    expect(jobs.KeySchema).toEqual([{ AttributeName: 'jobId', KeyType: 'HASH' }]);
    expect(jobs.AttributeDefinitions).toEqual([{ AttributeName: 'jobId', AttributeType: 'S' }]);
    expect(jobs.GlobalSecondaryIndexes).toBeUndefined();
    expect(jobs.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('builds the wheel table keyed by shard and entry, with TTL and no index', () => {
    const wheel = template.toJSON().Resources[logicalIdOf(scheduler.wheelTable)].Properties;
    expect(wheel.KeySchema).toEqual([
      { AttributeName: 'shard', KeyType: 'HASH' },
      { AttributeName: 'entry', KeyType: 'RANGE' },
    ]);
    expect(wheel.AttributeDefinitions).toEqual(
      expect.arrayContaining([
        { AttributeName: 'shard', AttributeType: 'N' },
        { AttributeName: 'entry', AttributeType: 'S' },
      ]),
    );
    expect(wheel.GlobalSecondaryIndexes).toBeUndefined();
    expect(wheel.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('builds the slices table with the keys-only sweep index and the history TTL', () => {
    const slices = template.toJSON().Resources[logicalIdOf(scheduler.slicesTable)].Properties;
    expect(slices.KeySchema).toEqual([
      { AttributeName: 'jobId', KeyType: 'HASH' },
      { AttributeName: 'scheduledAt', KeyType: 'RANGE' },
    ]);
    expect(slices.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'sweep',
        KeySchema: [
          { AttributeName: 'sweepShard', KeyType: 'HASH' },
          { AttributeName: 'sweepAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(slices.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('builds the chunks table keyed by execution key and item, with the sparse outbox index and TTL', () => {
    const chunks = template.toJSON().Resources[logicalIdOf(scheduler.chunksTable)].Properties;
    expect(chunks.KeySchema).toEqual([
      { AttributeName: 'executionKey', KeyType: 'HASH' },
      { AttributeName: 'item', KeyType: 'RANGE' },
    ]);
    expect(chunks.GlobalSecondaryIndexes).toMatchObject([
      {
        IndexName: 'outbox',
        KeySchema: [
          { AttributeName: 'outboxShard', KeyType: 'HASH' },
          { AttributeName: 'dueAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    expect(chunks.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it('turns on point-in-time recovery, AWS-owned encryption and retention by default', () => {
    const tables = resourcesOf(template, 'AWS::DynamoDB::Table');
    // Jobs, wheel, slices and chunks: a final slice is its execution's ledger record, so there is no ledger table.
    expect(Object.keys(tables)).toHaveLength(4);
    for (const table of Object.values(tables)) {
      expect(table.Properties?.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      // SSEEnabled false is DynamoDB's AWS-owned key.
      expect(table.Properties?.SSESpecification).toEqual({ SSEEnabled: false });
      expect(table.DeletionPolicy).toBe('Retain');
    }
  });

  it('uses a customer key, no PITR and DESTROY when asked', () => {
    const stack = new Stack(testApp(), 'Keyed');
    const key = new kms.Key(stack, 'Key');
    new CronScheduler(stack, 'Cron', {
      ...EXAMPLE_WORKER,
      encryptionKey: key,
      pointInTimeRecovery: false,
      removalPolicy: RemovalPolicy.DESTROY,
      alarms: { enabled: false },
    });
    const keyedTemplate = Template.fromStack(stack);
    const keyed = Object.values(resourcesOf(keyedTemplate, 'AWS::DynamoDB::Table'));
    for (const table of keyed) {
      expect(table.Properties?.SSESpecification).toMatchObject({ SSEEnabled: true, SSEType: 'KMS' });
      expect(table.Properties?.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: false });
      expect(table.DeletionPolicy).toBe('Delete');
    }
    for (const queue of Object.values(resourcesOf(keyedTemplate, 'AWS::SQS::Queue'))) {
      expect(queue.Properties?.KmsMasterKeyId).toBeDefined();
    }
  });

  it('pre-warms every table and its indexes when asked (warmThroughput), and none by default', () => {
    const stack = new Stack(testApp(), 'Warm');
    new CronScheduler(stack, 'Cron', {
      ...EXAMPLE_WORKER,
      warmThroughput: { writeUnitsPerSecond: 40_000, readUnitsPerSecond: 12_000 },
      alarms: { enabled: false },
    });
    const warm = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::DynamoDB::Table'));
    expect(warm).toHaveLength(4);
    for (const table of warm) {
      expect(table.Properties?.WarmThroughput).toEqual({ WriteUnitsPerSecond: 40_000, ReadUnitsPerSecond: 12_000 });
      for (const index of (table.Properties?.GlobalSecondaryIndexes ?? []) as { WarmThroughput?: unknown }[]) {
        expect(index.WarmThroughput).toEqual({ WriteUnitsPerSecond: 40_000, ReadUnitsPerSecond: 12_000 });
      }
    }
    for (const table of Object.values(resourcesOf(template, 'AWS::DynamoDB::Table')))
      expect(table.Properties?.WarmThroughput).toBeUndefined();
  });
});

describe('CronScheduler queues and event sources', () => {
  const queues = resourcesOf(template, 'AWS::SQS::Queue');
  const dlq = logicalIdOf(scheduler.deadLetterQueue);

  it('redrives the work and scan queues to the dead-letter queue with the schema maxReceiveCount', () => {
    expect(queues[logicalIdOf(scheduler.workQueue)]?.Properties?.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] },
      maxReceiveCount: 50,
    });
    expect(queues[logicalIdOf(scheduler.scanQueue)]?.Properties?.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] },
      maxReceiveCount: 20,
    });
    expect(queues[dlq]?.Properties?.RedrivePolicy).toBeUndefined();
    expect(queues[dlq]?.Properties?.MessageRetentionPeriod).toBe(14 * 86_400);
  });

  it('gives every consumed queue a visibility timeout at least its function timeout', () => {
    const mappings = Object.values(resourcesOf(template, 'AWS::Lambda::EventSourceMapping'));
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) {
      const queueId = (mapping.Properties?.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const functionId = (mapping.Properties?.FunctionName as { Ref: string }).Ref;
      const visibility = queues[queueId]?.Properties?.VisibilityTimeout as number;
      const timeout = functions[functionId]?.Properties?.Timeout as number;
      expect(timeout).toBeGreaterThan(0);
      expect(visibility).toBeGreaterThanOrEqual(timeout);
    }
    expect(queues[logicalIdOf(scheduler.workQueue)]?.Properties?.VisibilityTimeout).toBe(120);
    // The bench measures the Lambda path with this visibility (tools/bench/price-table.ts).
    expect(CONSTRUCT_WORK_QUEUE_VISIBILITY_MS).toBe(120 * 1000);
    expect(queues[logicalIdOf(scheduler.scanQueue)]?.Properties?.VisibilityTimeout).toBe(60);
  });

  it('maps the worker and scanner with ReportBatchItemFailures and the batch props', () => {
    const custom = synthScheduler({
      workerBatch: { batchSize: 5, maxConcurrency: 20 },
      scannerBatch: { maxConcurrency: 4 },
      alarms: { enabled: false },
    });
    custom.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(custom.scheduler.workerFunction) },
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(custom.scheduler.workQueue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 5,
      ScalingConfig: { MaximumConcurrency: 20 },
    });
    custom.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(custom.scheduler.scannerFunction) },
      EventSourceArn: { 'Fn::GetAtt': [logicalIdOf(custom.scheduler.scanQueue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 4 },
    });
  });

  it('raises the work queue visibility with a longer worker timeout', () => {
    const slow = synthScheduler({ workerTimeout: Duration.minutes(10), alarms: { enabled: false } });
    slow.template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 600,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 50 }),
    });
  });
});

describe('CronScheduler tick and functions', () => {
  it('ticks the tick function every minute', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalIdOf(scheduler.tickFunction), 'Arn'] } })],
    });
  });

  it('runs every function on nodejs22.x arm64 with the environment lib/aws/config.ts reads', () => {
    for (const fn of [scheduler.tickFunction, scheduler.scannerFunction, scheduler.workerFunction]) {
      const props = template.toJSON().Resources[logicalIdOf(fn)].Properties;
      expect(props.Runtime).toBe('nodejs22.x');
      expect(props.Architectures).toEqual(['arm64']);
      expect(props.Handler).toBe('index.handler');
      expect(Object.keys(props.Environment.Variables)).toEqual(
        expect.arrayContaining([
          'CRONFENCE_JOBS_TABLE',
          'CRONFENCE_SLICES_TABLE',
          'CRONFENCE_WORK_QUEUE',
          'CRONFENCE_SCAN_QUEUE',
          'CRONFENCE_DEAD_LETTER_QUEUE',
          'CRONFENCE_WORK_QUEUE_URL',
          'CRONFENCE_SCAN_QUEUE_URL',
          'CRONFENCE_DEAD_LETTER_QUEUE_URL',
          'CRONFENCE_EVENT_BUS',
          'CRONFENCE_SHARDS',
          'CRONFENCE_LOOKAHEAD_MS',
          'CRONFENCE_SWEEP_GRACE_MS',
          'CRONFENCE_SLICE_RETENTION_MS',
          'CRONFENCE_PUBLISH_SUCCEEDED',
        ]),
      );
      expect(props.Environment.Variables.CRONFENCE_SHARDS).toBe('8');
      expect(props.Environment.Variables.CRONFENCE_JOBS_TABLE).toEqual({ Ref: logicalIdOf(scheduler.jobsTable) });
    }
  });

  it('refuses out-of-range settings at synth, naming the variable', () => {
    expect(() => synthScheduler({ shardCount: 0 })).toThrow(InvalidJobSpecError);
    expect(() => synthScheduler({ shardCount: 0 })).toThrow(/CRONFENCE_SHARDS "0"/);
    expect(() => synthScheduler({ lookahead: Duration.seconds(30) })).toThrow(/lookahead/);
    expect(() => synthScheduler({ lookahead: Duration.minutes(61) })).toThrow(InvalidJobSpecError);
    expect(() => synthScheduler({ lookahead: Duration.minutes(61) })).toThrow(
      /invalid lookahead "1 hour 1 minute": must be at most 1 hour/,
    );
  });

  it("takes a lookahead past SQS's 15-minute delay, up to an hour, and raises the oldest-message alarm above it", () => {
    const long = synthScheduler({ lookahead: Duration.minutes(30) });
    const lookaheads = Object.values(resourcesOf(long.template, 'AWS::Lambda::Function'))
      .map(
        (r) => (r.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables?.CRONFENCE_LOOKAHEAD_MS,
      )
      .filter((value) => value !== undefined);
    expect(lookaheads.length).toBeGreaterThan(0);
    expect(new Set(lookaheads)).toEqual(new Set(['1800000']));
    // A message waits up to the lookahead before it is due: that is not a backlog (35 minutes, not the default 15).
    long.template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 2100 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 900 });
  });
});
