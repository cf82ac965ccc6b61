/**
 * A CloudWatch dashboard for one CronScheduler: what the engine reports
 * (outcomes, start lag, takeovers, fenced-out writes, missed occurrences,
 * commit latency, throttles; the Lambdas write these through Powertools) beside
 * what AWS reports about the same installation (DLQ depth, table throttles,
 * each function's errors and duration). Every metric comes from
 * scheduler-metrics.ts, the definitions the alarms use too.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deadLetterDepth, tableThrottles, type SchedulerMetrics } from './scheduler-metrics.ts';

export interface SchedulerDashboardProps {
  readonly metrics: SchedulerMetrics;
  readonly functions: Readonly<Record<'Tick' | 'Scanner' | 'Worker', lambda.IFunction>>;
  readonly tables: Readonly<Record<'Jobs' | 'Wheel' | 'Slices', dynamodb.ITable>>;
  readonly deadLetterQueue: sqs.IQueue;
  /** @default a name CloudFormation generates */
  readonly dashboardName?: string;
  /** @default Duration.minutes(5) */
  readonly period?: Duration;
}

const WIDTH = 8;
const HEIGHT = 6;

export class SchedulerDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: SchedulerDashboardProps) {
    super(scope, id);
    const period = props.period ?? Duration.minutes(5);
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
      widgets: [
        engineRow(props.metrics, period),
        failoverRow(props, period),
        pressureRow(props, period),
        functionsRow(props.functions, period),
      ],
    });
  }
}

/** What happened to the slices, and how late they started. */
function engineRow(metrics: SchedulerMetrics, period: Duration): cloudwatch.IWidget[] {
  const sum = (key: Parameters<SchedulerMetrics['engine']>[0], label: string) => metrics.engine(key, { period, statistic: 'Sum', label });
  return [
    graph(
      'Slices per outcome',
      [
        sum('succeeded', 'succeeded'),
        sum('failed', 'failed (retry follows)'),
        sum('dead', 'dead'),
        sum('skipped', 'skipped'),
        sum('missed', 'missed'),
      ],
      { width: 2 * WIDTH, stacked: true },
    ),
    graph('Start lag (ms)', [
      metrics.engine('startLag', { period, statistic: 'p50', label: 'p50' }),
      metrics.engine('startLag', { period, statistic: 'p99', label: 'p99' }),
    ]),
  ];
}

/** Failover and its side: takeovers, the zombies' refused writes, missed occurrences, dead letters. */
function failoverRow(props: SchedulerDashboardProps, period: Duration): cloudwatch.IWidget[] {
  const { metrics } = props;
  return [
    graph('Failover takeovers and fenced-out writes', [
      metrics.engine('takeovers', { period, statistic: 'Sum', label: 'takeovers' }),
      metrics.engine('fencedOut', { period, statistic: 'Sum', label: 'fenced out' }),
    ]),
    graph('Missed occurrences', [metrics.engine('missed', { period, statistic: 'Sum', label: 'missed' })]),
    graph("Stale jobs (dead-man's switch)", [
      metrics.engine('staleJobs', { period, statistic: 'Sum', label: 'stale jobs' }),
      metrics.engine('setAside', { period, statistic: 'Sum', label: 'jobs set aside (row cannot be planned or sent)' }),
    ]),
    new cloudwatch.SingleValueWidget({
      title: 'Dead-letter queue depth',
      metrics: [deadLetterDepth(props.deadLetterQueue, period, 'messages (maximum)')],
      sparkline: true,
      width: WIDTH,
      height: HEIGHT,
    }),
  ];
}

/** Back-pressure: throttles (the engine's count of throttled AWS tries and DynamoDB's per table) and commit latency. */
function pressureRow(props: SchedulerDashboardProps, period: Duration): cloudwatch.IWidget[] {
  const { metrics } = props;
  return [
    graph(
      'Throttles',
      [
        metrics.engine('throttles', { period, statistic: 'Sum', label: 'throttled AWS tries (cronfence)' }),
        ...Object.entries(props.tables).map(([name, table]) => tableThrottles(name, table, period)),
      ],
      { width: 2 * WIDTH },
    ),
    graph('Commit latency (ms)', [
      metrics.engine('commitLatency', { period, statistic: 'p50', label: 'p50' }),
      metrics.engine('commitLatency', { period, statistic: 'p99', label: 'p99' }),
    ]),
  ];
}

/** Errors and duration of the tick, scanner and worker Lambdas. */
function functionsRow(functions: SchedulerDashboardProps['functions'], period: Duration): cloudwatch.IWidget[] {
  const each = Object.entries(functions);
  return [
    graph(
      'Lambda errors',
      each.map(([name, fn]) => fn.metricErrors({ period, statistic: 'Sum', label: name.toLowerCase() })),
      { width: WIDTH },
    ),
    graph(
      'Lambda duration p99 (ms)',
      each.map(([name, fn]) => fn.metricDuration({ period, statistic: 'p99', label: name.toLowerCase() })),
      { width: WIDTH },
    ),
    graph(
      'Lambda throttles',
      each.map(([name, fn]) => fn.metricThrottles({ period, statistic: 'Sum', label: name.toLowerCase() })),
      { width: WIDTH },
    ),
  ];
}

function graph(title: string, left: cloudwatch.IMetric[], options: { width?: number; stacked?: boolean } = {}): cloudwatch.GraphWidget {
  return new cloudwatch.GraphWidget({ title, left, width: options.width ?? WIDTH, height: HEIGHT, stacked: options.stacked ?? false });
}
