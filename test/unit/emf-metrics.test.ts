/**
 * The Lambda metrics sink: lifecycle events, commits and throttled AWS tries
 * in, the EMF document Powertools writes out (read with Powertools' own
 * serializeMetrics(), or the line it prints on stdout at a flush).
 */
import { Readable } from 'node:stream';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { HttpResponse } from '@smithy/core/transport';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { onThrottledRequest } from '../../lib/aws/throttle-meter.ts';
import { ManualClock, realSleep } from '../../lib/core/clock.ts';
import { FanOutEventSink, lifecycleEvent, type LifecycleEventDetails, type LifecycleEventType } from '../../lib/core/events.ts';
import { EngineMetrics, engineMetricsOutput, lambdaMetrics } from '../../lib/lambda/emf-metrics.ts';
import { DEFAULT_METRICS_NAMESPACE, ENGINE_METRICS, PER_JOB_METRICS } from '../../lib/lambda/metric-names.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const SLICE = { jobId: 'nightly-report', scheduledAt: T0 };

type Emf = ReturnType<Metrics['serializeMetrics']>;

function event(type: LifecycleEventType, details: Partial<LifecycleEventDetails> = {}) {
  return lifecycleEvent(type, SLICE, T0 + 50, { fence: 1, worker: 'worker-a', ...details });
}

function sinkFor(clock = new ManualClock(T0)): { metrics: Metrics; sink: EngineMetrics } {
  const metrics = new Metrics({ namespace: DEFAULT_METRICS_NAMESPACE, serviceName: 'Shop/Cron' });
  return { metrics, sink: new EngineMetrics(metrics, clock) };
}

function units(emf: Emf): Record<string, string> {
  return Object.fromEntries((emf._aws.CloudWatchMetrics[0]?.Metrics ?? []).map((definition) => [definition.Name, definition.Unit]));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('EngineMetrics (Powertools EMF)', () => {
  it('turns each lifecycle event into its metric: names, units, values, the namespace and the one service dimension', () => {
    const { metrics, sink } = sinkFor();
    sink.emit(event('claimed', { attempt: 1 }));
    sink.emit(event('claimed', { fence: 2, attempt: 2, takeover: true }));
    sink.emit(event('started', { startLagMs: 120 }));
    sink.emit(event('started', { startLagMs: 40 }));
    sink.emit(event('committed', { durationMs: 300 }));
    sink.emit(event('committed', { durationMs: 310 }));
    sink.emit(event('failed', { error: 'Error: boom', retryAt: new Date(T0 + 2000).toISOString() }));
    sink.emit(event('dead', { error: 'Error: boom' }));
    sink.emit(event('skipped'));
    sink.emit(event('missed', { fence: 0, count: 7 }));
    sink.emit(event('fenced_out', { error: 'FencedOutError: fence 1' }));

    const emf = metrics.serializeMetrics();
    expect(emf._aws.CloudWatchMetrics).toHaveLength(1);
    expect(emf._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Cronfence', Dimensions: [['service']] });
    expect(emf.service).toBe('Shop/Cron');
    expect(units(emf)).toEqual({
      Takeovers: 'Count',
      StartLag: 'Milliseconds',
      SlicesSucceeded: 'Count',
      SlicesFailed: 'Count',
      SlicesDead: 'Count',
      SlicesSkipped: 'Count',
      SlicesMissed: 'Count',
      FencedOut: 'Count',
    });
    // A plain claim is no metric; a takeover is one. Repeated values stay apart (CloudWatch sums them, or takes percentiles).
    expect(emf).toMatchObject({
      Takeovers: 1,
      StartLag: [120, 40],
      SlicesSucceeded: [1, 1],
      SlicesFailed: 1,
      SlicesDead: 1,
      SlicesSkipped: 1,
      SlicesMissed: 7,
      FencedOut: 1,
    });
  });

  it('the names and units it writes are the shared list the dashboard reads', async () => {
    const { metrics, sink } = sinkFor();
    for (const type of ['committed', 'failed', 'dead', 'skipped', 'fenced_out', 'set_aside'] as const) sink.emit(event(type));
    sink.emit(event('missed', { count: 1 }));
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true); // the per-job JobStale line
    sink.emit(event('stale', { fence: 0 }));
    sink.emit(event('started', { startLagMs: 1 }));
    sink.emit(event('claimed', { takeover: true }));
    sink.throttled();
    // A commit of a slice nobody holds is refused: it is timed all the same.
    const store = sink.meterCommits(createMemoryEngine(new ManualClock(T0)).slices);
    await expect(store.commit({ key: SLICE, fence: 1, owner: 'worker-a' }, T0, [])).rejects.toThrow();
    const written = units(metrics.serializeMetrics());
    expect(written).toEqual(Object.fromEntries(Object.values(ENGINE_METRICS).map((metric) => [metric.name, metric.unit])));
  });

  it("names the job in the dead-man's metric, and in StartLag only when per-job metrics are on (each its own EMF line, dimension jobId)", () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const metrics = new Metrics({ namespace: DEFAULT_METRICS_NAMESPACE, serviceName: 'Shop/Cron' });
    const perJob = new EngineMetrics(metrics, new ManualClock(T0), true);
    perJob.emit(event('stale', { fence: 0, worker: 'dead-man', silentSince: new Date(T0).toISOString(), intervalMs: 60_000 }));
    perJob.emit(event('started', { startLagMs: 75 }));
    const written = lines.map((line) => JSON.parse(line) as Emf & Record<string, unknown>);
    expect(
      written.map((emf) => [
        emf._aws.CloudWatchMetrics[0]?.Dimensions,
        emf.jobId,
        emf[PER_JOB_METRICS.stale.name] ?? emf[PER_JOB_METRICS.startLag.name],
      ]),
    ).toEqual([
      [[['service', 'jobId']], 'nightly-report', 1],
      [[['service', 'jobId']], 'nightly-report', 75],
    ]);
    expect(metrics.serializeMetrics()).toMatchObject({ StaleJobs: 1, StartLag: 75 });

    lines.length = 0;
    const { sink } = sinkFor();
    sink.emit(event('started', { startLagMs: 75 }));
    expect(lines).toEqual([]);
  });

  it('flushes once per invocation, also when the handler throws, and writes nothing when nothing was recorded', async () => {
    const { sink } = sinkFor();
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const handler = sink.flushAfter(async (records: number) => {
      for (let i = 0; i < records; i++) sink.emit(event('committed'));
      return records;
    });
    expect(await handler(3)).toBe(3);
    expect(lines).toHaveLength(1);
    const emf = JSON.parse(lines[0]!) as Emf;
    expect(emf).toMatchObject({ SlicesSucceeded: [1, 1, 1], service: 'Shop/Cron' });
    expect(emf._aws.CloudWatchMetrics[0]?.Namespace).toBe('Cronfence');

    expect(await handler(0)).toBe(0);
    expect(lines).toHaveLength(1);

    const failing = sink.flushAfter(async () => {
      sink.emit(event('fenced_out'));
      throw new Error('batch failed');
    });
    await expect(failing()).rejects.toThrow('batch failed');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toMatchObject({ FencedOut: 1 });
    expect(JSON.parse(lines[1]!)).not.toHaveProperty('SlicesSucceeded');
  });

  it('is a no-op outside Lambda; in Lambda the namespace and service come from Powertools variables, else Cronfence and the prefix', () => {
    const handler = async (): Promise<number> => 1;
    const local = lambdaMetrics({});
    expect(local.flushAfter(handler)).toBe(handler);
    expect(local.runtimeOptions()).toEqual({});
    expect(lambdaMetrics({ AWS_LAMBDA_FUNCTION_NAME: 'Shop-CronWorker' })).toBeInstanceOf(EngineMetrics);

    const configured = engineMetricsOutput({ POWERTOOLS_METRICS_NAMESPACE: 'Ops', POWERTOOLS_SERVICE_NAME: 'Shop/Cron' });
    configured.addMetric('SlicesSucceeded', 'Count', 1);
    expect(configured.serializeMetrics()).toMatchObject({ _aws: { CloudWatchMetrics: [{ Namespace: 'Ops' }] }, service: 'Shop/Cron' });
    const defaults = engineMetricsOutput({ CRONFENCE_PREFIX: 'shop' });
    defaults.addMetric('SlicesSucceeded', 'Count', 1);
    expect(defaults.serializeMetrics()).toMatchObject({ _aws: { CloudWatchMetrics: [{ Namespace: 'Cronfence' }] }, service: 'shop' });
  });

  it('over the real worker and in-memory stores: a takeover, the zombie fenced out, the standby committed and its commit timed', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const { metrics, sink } = sinkFor(queueClock);
    const events = new FanOutEventSink(engine.events, sink);
    const job = await engine.register({ id: 'takeover', policies: FAST }, async (ctx) => {
      if (ctx.worker === 'stuck') await realSleep(60_000, ctx.signal);
    });
    await engine.enqueue(job, T0);
    // The holder's store stops answering renewals (a partition): its lease runs out and its writes are refused.
    const silent = Object.assign(Object.create(engine.slices) as typeof engine.slices, { renew: () => new Promise<void>(() => {}) });
    const [original] = engine.workQueue.receive();
    await engine.deliver(engine.worker('stuck', { slices: silent, events }), original!);
    // The standby's commit takes 25 ms by the clock the sink reads.
    const slow = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      commit: async (...args: Parameters<typeof engine.slices.commit>) => {
        queueClock.advance(25);
        return engine.slices.commit(...args);
      },
    });
    queueClock.advance(1000);
    expect(await engine.drain(engine.worker('standby', { slices: sink.meterCommits(slow), events }))).toBe(1);

    expect(engine.events.ofType('claimed').map((claim) => [claim.worker, claim.takeover])).toEqual([
      ['stuck', undefined],
      ['standby', true],
    ]);
    const emf = metrics.serializeMetrics();
    expect(emf).toMatchObject({ Takeovers: 1, FencedOut: 1, SlicesSucceeded: 1, CommitLatency: 25 });
    expect(units(emf)).toMatchObject({ CommitLatency: 'Milliseconds', StartLag: 'Milliseconds' });
  });

  it('counts every throttled try of an AWS request, the ones the SDK retried by itself too; other errors pass uncounted', async () => {
    const { metrics, sink } = sinkFor();
    const replies = [throttled(), throttled(), found()];
    const dynamo = new DynamoDBClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      retryStrategy: new ConfiguredRetryStrategy(3, () => 1),
      requestHandler: { handle: async () => ({ response: replies.shift() ?? invalid() }) },
    });
    onThrottledRequest({ dynamo } as never, () => sink.throttled());
    await expect(dynamo.send(new GetItemCommand({ TableName: 'slices', Key: { jobId: { S: 'a' } } }))).resolves.toMatchObject({
      Item: { jobId: { S: 'a' } },
    });
    await expect(dynamo.send(new GetItemCommand({ TableName: 'slices', Key: { jobId: { S: 'a' } } }))).rejects.toThrow('bad key');
    expect(metrics.serializeMetrics()).toMatchObject({ ThrottledAwsRequests: [1, 1] });
  });
});

/** Lease 1 s of clock time, renewed every 100 ms of real time (as worker-memory.test.ts). */
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };

function reply(statusCode: number, body: object): HttpResponse {
  return new HttpResponse({
    statusCode,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'test' },
    body: Readable.from([Buffer.from(JSON.stringify(body))]),
  });
}
const throttled = (): HttpResponse =>
  reply(400, {
    __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  });
const invalid = (): HttpResponse => reply(400, { __type: 'com.amazon.coral.validate#ValidationException', message: 'bad key' });
const found = (): HttpResponse => reply(200, { Item: { jobId: { S: 'a' } } });
