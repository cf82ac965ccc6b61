/**
 * The CloudWatch metrics of one CronScheduler, defined once for the alarms
 * and the dashboard: the engine's own (written by the Lambdas through
 * Powertools, names from lib/lambda/metric-names.ts) and the AWS ones that
 * watch the same installation (DLQ depth, table throttles, Lambda errors).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  ENGINE_METRICS,
  METRICS_NAMESPACE_VARIABLE,
  SERVICE_DIMENSION,
  SERVICE_NAME_VARIABLE,
  type EngineMetricKey,
} from '../lambda/metric-names.ts';

/** The DynamoDB operations cronfence issues, for the throttle alarms and graphs. */
export const DYNAMO_OPERATIONS: readonly dynamodb.Operation[] = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.TRANSACT_WRITE_ITEMS,
  // The scanner's: jobs read in batches, wheel entries placed in batches.
  dynamodb.Operation.BATCH_GET_ITEM,
  dynamodb.Operation.BATCH_WRITE_ITEM,
];

export interface MetricOptions {
  /** @default 'Sum' for counts, 'p99' for durations */
  readonly statistic?: string;
  /** @default one minute */
  readonly period?: Duration;
  readonly label?: string;
}

export class SchedulerMetrics {
  /**
   * @param namespace the engine metrics' CloudWatch namespace.
   * @param service the `service` dimension's value: this installation.
   */
  constructor(
    readonly namespace: string,
    readonly service: string,
  ) {}

  /** The variables that make Powertools in each Lambda write to this namespace and service. */
  environment(): Record<string, string> {
    return { [METRICS_NAMESPACE_VARIABLE]: this.namespace, [SERVICE_NAME_VARIABLE]: this.service };
  }

  /** One of the engine's metrics, as the Lambdas write it. */
  engine(key: EngineMetricKey, options: MetricOptions = {}): cloudwatch.Metric {
    const definition = ENGINE_METRICS[key];
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: definition.name,
      dimensionsMap: { [SERVICE_DIMENSION]: this.service },
      statistic: options.statistic ?? (definition.unit === 'Count' ? 'Sum' : 'p99'),
      period: options.period ?? Duration.minutes(1),
      label: options.label,
    });
  }
}

/** Messages waiting in the dead-letter queue (DEAD slices, poison and unreadable messages). */
export function deadLetterDepth(queue: sqs.IQueue, period = Duration.minutes(1), label?: string): cloudwatch.Metric {
  return queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum', label });
}

/**
 * Throttled requests to a table, summed over the operations cronfence issues
 * (as `metricThrottledRequestsForOperations`, but its terms named after the
 * table, so several tables fit in one graph).
 * @param name the table's short name (`Jobs`), which names the expression's terms.
 */
export function tableThrottles(name: string, table: dynamodb.ITable, period = Duration.minutes(1)): cloudwatch.MathExpression {
  const usingMetrics = Object.fromEntries(
    DYNAMO_OPERATIONS.map((operation) => [
      `${name.toLowerCase()}${operation.toLowerCase()}`,
      table.metric('ThrottledRequests', { period, statistic: 'Sum', dimensionsMap: { TableName: table.tableName, Operation: operation } }),
    ]),
  );
  return new cloudwatch.MathExpression({
    expression: Object.keys(usingMetrics).join(' + '),
    usingMetrics,
    period,
    label: `${name.toLowerCase()} table throttles`,
  });
}
