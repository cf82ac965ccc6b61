/**
 * CloudWatch alarms for a CronScheduler:
 * - dead-letter queue not empty (DEAD slices, poison and unreadable messages);
 * - age of the oldest work message;
 * - Lambda throttles (tick, scanner, worker) and DynamoDB throttled requests (each table);
 * - fenced-out writes, missed slices and stale jobs (the dead-man's switch): the engine's own metrics, which the
 *   Lambdas write through Powertools (scheduler-metrics.ts, the same
 *   definitions the dashboard graphs).
 *
 * A rule on the scheduler's bus also copies `fenced_out`, `missed`, `dead` and `stale`
 * events into a log group: an audit trail of exactly the events an operator
 * is paged for.
 */
import { ArnFormat, Duration, Names, Stack, type RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EVENT_SOURCE } from '../aws/schema.ts';
import { stackInstanceId } from './lifecycle.ts';
import { deadLetterDepth, tableThrottles, type SchedulerMetrics } from './scheduler-metrics.ts';

/** The lifecycle events copied to the audit log group. */
export const AUDITED_EVENT_TYPES = ['fenced_out', 'missed', 'dead', 'stale'] as const;

export interface SchedulerAlarmsProps {
  readonly functions: Readonly<Record<'Tick' | 'Scanner' | 'Worker', lambda.IFunction>>;
  readonly tables: Readonly<Record<'Jobs' | 'Wheel' | 'Slices', dynamodb.Table>>;
  readonly workQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly bus: events.IEventBus;
  readonly oldestWorkMessageAge: Duration;
  /** The engine's metrics (fenced-out, missed) of this installation. */
  readonly metrics: SchedulerMetrics;
  readonly topic?: sns.ITopic;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: logs.RetentionDays;
}

export class SchedulerAlarms extends Construct {
  /** Every alarm created, by construct id. */
  readonly alarms: cloudwatch.Alarm[] = [];
  /** The log group the audited lifecycle events land in. */
  readonly lifecycleLog: logs.LogGroup;

  constructor(scope: Construct, id: string, props: SchedulerAlarmsProps) {
    super(scope, id);
    this.lifecycleLog = this.auditLog(props);
    const add = (alarmId: string, metric: cloudwatch.IMetric, threshold: number, description: string): void => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      if (props.topic) {
        alarm.addAlarmAction(new actions.SnsAction(props.topic));
        alarm.addOkAction(new actions.SnsAction(props.topic));
      }
      this.alarms.push(alarm);
    };

    const minute = Duration.minutes(1);
    add(
      'DeadLetters',
      deadLetterDepth(props.deadLetterQueue, minute),
      1,
      'cronfence: the dead-letter queue holds messages (DEAD slices, poison or unreadable messages)',
    );
    add(
      'OldestWorkMessage',
      props.workQueue.metricApproximateAgeOfOldestMessage({ period: minute, statistic: 'Maximum' }),
      props.oldestWorkMessageAge.toSeconds(),
      `cronfence: a work message is older than ${props.oldestWorkMessageAge.toHumanString()} (workers not keeping up or failing)`,
    );
    for (const [name, fn] of Object.entries(props.functions)) {
      add(`${name}Throttles`, fn.metricThrottles({ period: minute, statistic: 'Sum' }), 1, `cronfence: the ${name.toLowerCase()} Lambda is throttled`);
    }
    for (const [name, table] of Object.entries(props.tables)) {
      add(
        `${name}TableThrottles`,
        tableThrottles(name, table, minute),
        1,
        `cronfence: requests to the ${name.toLowerCase()} table are throttled`,
      );
    }
    add('FencedOut', props.metrics.engine('fencedOut'), 1, 'cronfence: a write was refused by the fence (a worker lost its lease mid-run)');
    add('MissedSlices', props.metrics.engine('missed'), 1, 'cronfence: occurrences older than their catch-up window were recorded MISSED');
    add(
      'StaleJobs',
      props.metrics.engine('staleJobs'),
      1,
      "cronfence: the dead-man's switch found a job with no final slot within k of its intervals (the `stale` event and JobStale{jobId} name it)",
    );
  }

  private auditLog(props: SchedulerAlarmsProps): logs.LogGroup {
    const logGroup = new logs.LogGroup(this, 'Lifecycle', {
      // EventBridge writes only to groups under /aws/events/, so the name is ours to give: it ends in this stack
      // instance's id, so a group retained by `cdk destroy` never collides with the next deploy's.
      logGroupName: `/aws/events/cronfence/${Names.uniqueResourceName(this, { maxLength: 200, separator: '-' })}-${stackInstanceId(this)}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // A native resource policy (not the events-targets custom resource): EventBridge may write to this group.
    new logs.ResourcePolicy(this, 'EventsToLifecycleLog', {
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [logGroup.logGroupArn],
        }),
      ],
    });
    const rule = new events.Rule(this, 'AuditedEvents', {
      eventBus: props.bus,
      description: 'cronfence lifecycle events an operator is paged for',
      eventPattern: { source: [EVENT_SOURCE], detailType: [...AUDITED_EVENT_TYPES] },
    });
    const targetArn = Stack.of(this).formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: logGroup.logGroupName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    rule.addTarget({ bind: () => ({ arn: targetArn }) });
    return logGroup;
  }
}
