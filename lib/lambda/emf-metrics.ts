/**
 * The engine's metrics in a Lambda function, through Powertools metrics (EMF:
 * one JSON line on stdout per flush, which CloudWatch Logs turns into metrics;
 * no PutMetricData call, no extra permission). Three sources feed it:
 *
 * - the lifecycle events (it is an EventSink beside the bus): outcomes, start
 *   lag, takeovers, fenced-out writes, missed occurrences;
 * - the slice store's commit, timed (CommitLatency);
 * - every AWS request try refused as throttled (lib/aws/throttle-meter.ts).
 *
 * Flushed once per invocation, as Powertools' `logMetrics` does, and only when
 * something was recorded. Outside Lambda (a local run, a test importing a
 * handler) `lambdaMetrics()` gives a no-op, so nothing local prints EMF.
 * Names, units and the one dimension: metric-names.ts.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createAwsClients, type AwsClients } from '../aws/clients.ts';
import { loadConfig } from '../aws/config.ts';
import { onThrottledRequest } from '../aws/throttle-meter.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { EventSink, LifecycleEvent } from '../core/events.ts';
import type { SliceStore } from '../core/ports.ts';
import type { RuntimePorts } from './wiring.ts';
import {
  DEFAULT_METRICS_NAMESPACE,
  ENGINE_METRICS,
  JOB_DIMENSION,
  METRICS_NAMESPACE_VARIABLE,
  PER_JOB_METRICS,
  SERVICE_NAME_VARIABLE,
  type EngineMetric,
} from './metric-names.ts';

/** What a Runtime needs to feed the metrics (a subset of RuntimeOptions, by shape). */
export interface MeteredRuntimeOptions {
  readonly clients?: AwsClients;
  readonly sinks?: EventSink[];
  readonly decoratePorts?: (ports: RuntimePorts) => RuntimePorts;
}

/** What the Lambda entries use: options for the runtime, and a flush after each invocation. */
export interface LambdaMetrics {
  runtimeOptions(): MeteredRuntimeOptions;
  flushAfter<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
}

export class EngineMetrics implements EventSink, LambdaMetrics {
  constructor(
    private readonly metrics: Metrics,
    private readonly clock: Clock = systemClock,
    /** Also write StartLag per job (CRONFENCE_PER_JOB_METRICS). */
    private readonly perJobStartLag = false,
  ) {}

  emit(event: LifecycleEvent): void {
    switch (event.type) {
      case 'claimed':
        if (event.takeover) this.add(ENGINE_METRICS.takeovers, 1);
        return;
      case 'started':
        if (event.startLagMs === undefined) return;
        this.add(ENGINE_METRICS.startLag, event.startLagMs);
        if (this.perJobStartLag) this.addForJob(PER_JOB_METRICS.startLag, event.jobId, event.startLagMs);
        return;
      case 'stale':
        this.add(ENGINE_METRICS.staleJobs, 1);
        return this.addForJob(PER_JOB_METRICS.stale, event.jobId, 1);
      case 'committed':
        return this.add(ENGINE_METRICS.succeeded, 1);
      case 'failed':
        return this.add(ENGINE_METRICS.failed, 1);
      case 'dead':
        return this.add(ENGINE_METRICS.dead, 1);
      case 'skipped':
        return this.add(ENGINE_METRICS.skipped, 1);
      case 'missed':
        return this.add(ENGINE_METRICS.missed, event.count ?? 1);
      case 'fenced_out':
        return this.add(ENGINE_METRICS.fencedOut, 1);
      case 'set_aside':
        return this.add(ENGINE_METRICS.setAside, 1);
    }
  }

  /** One throttled AWS request try. */
  throttled(): void {
    this.add(ENGINE_METRICS.throttles, 1);
  }

  /** The same store, its commits timed (every try, whatever its outcome). */
  meterCommits(store: SliceStore): SliceStore {
    return new Proxy(store, {
      get: (target, property, receiver) => {
        if (property !== 'commit') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<SliceStore['commit']>) => {
          const from = this.clock.now();
          try {
            await target.commit(...args);
          } finally {
            this.add(ENGINE_METRICS.commitLatency, this.clock.now() - from);
          }
        };
      },
    });
  }

  runtimeOptions(): MeteredRuntimeOptions {
    const clients = createAwsClients();
    onThrottledRequest(clients, () => this.throttled());
    return { clients, sinks: [this], decoratePorts: (ports) => ({ ...ports, slices: this.meterCommits(ports.slices) }) };
  }

  /** Writes what was recorded as one EMF line (Powertools splits at 100 metrics or values), if anything was. */
  flush(): void {
    try {
      if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
    } catch {
      // Lost metrics must not fail the invocation: SQS would deliver the whole batch again.
    }
  }

  flushAfter<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      try {
        return await handler(...args);
      } finally {
        this.flush();
      }
    };
  }

  /** A metric with the job as a dimension: written at once, as its own EMF line (Powertools' single metric). */
  private addForJob(metric: EngineMetric, jobId: string, value: number): void {
    try {
      const single = this.metrics.singleMetric();
      single.addDimension(JOB_DIMENSION, jobId);
      single.addMetric(metric.name, metric.unit, value);
      single.publishStoredMetrics();
    } catch {
      // As add(): an observer's failure must not change an outcome.
    }
  }

  private add(metric: EngineMetric, value: number): void {
    try {
      this.metrics.addMetric(metric.name, metric.unit, value);
    } catch {
      // Called inside a commit and inside SDK requests too: an observer's failure must not change their outcome.
    }
  }
}

const NO_METRICS: LambdaMetrics = {
  runtimeOptions: () => ({}),
  flushAfter: (handler) => handler,
};

/**
 * The metrics of this Lambda function: namespace and `service` dimension from
 * the variables the construct sets (Powertools' own), else `Cronfence` and the
 * installation's prefix. A no-op outside Lambda.
 */
export function lambdaMetrics(env: Record<string, string | undefined> = process.env): LambdaMetrics {
  if (!env.AWS_LAMBDA_FUNCTION_NAME) return NO_METRICS;
  return new EngineMetrics(engineMetricsOutput(env), systemClock, loadConfig(env).perJobMetrics);
}

/** The Powertools Metrics instance the engine writes to. */
export function engineMetricsOutput(env: Record<string, string | undefined> = process.env): Metrics {
  return new Metrics({
    namespace: env[METRICS_NAMESPACE_VARIABLE] || DEFAULT_METRICS_NAMESPACE,
    serviceName: env[SERVICE_NAME_VARIABLE] || loadConfig(env).prefix,
  });
}
