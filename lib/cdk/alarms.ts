/**
 * CloudWatch alarms for a CronScheduler:
 * - dead-letter queue not empty (DEAD slices, poison and unreadable messages);
 * - age of the oldest work message;
 * - the scheduler stopped: no tick, or no scan, for `stoppedAfter` (AWS's own counts, missing data breaching);
 * - tick and scanner invocation errors;
 * - Lambda throttles (tick, scanner, worker) and DynamoDB throttled requests (each table);
 * - fenced-out writes, missed slices and stale jobs (the dead-man's switch): the engine's own metrics, which the
 *   Lambdas write through Powertools (scheduler-metrics.ts, the same
 *   definitions the dashboard graphs).
 *
 * A rule on the scheduler's bus also copies `fenced_out`, `missed`, `dead` and `stale`
 * events into a log group: an audit trail of exactly the events an operator
 * is paged for.
 */
import { Annotations, ArnFormat, Duration, Names, Stack, type RemovalPolicy } from 'aws-cdk-lib';
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
import { InvalidSchedulerPropError } from '../core/errors.ts';
import { stackInstanceId } from './lifecycle.ts';
import { deadLetterDepth, tableThrottles, type SchedulerMetrics } from './scheduler-metrics.ts';

/** The lifecycle events copied to the audit log group. */
export const AUDITED_EVENT_TYPES = ['fenced_out', 'missed', 'dead', 'stale'] as const;

/** The id of the synth warning for alarms without a topic (acknowledge it with `Annotations.of(scope).acknowledgeWarning`). */
export const NO_TOPIC_WARNING = 'cronfence:alarms-without-topic';

type AlarmShape = Pick<cloudwatch.AlarmProps, 'evaluationPeriods' | 'datapointsToAlarm' | 'comparisonOperator' | 'treatMissingData'>;
type AddAlarm = (alarmId: string, metric: cloudwatch.IMetric, threshold: number, description: string, shape?: Partial<AlarmShape>) => void;

export interface SchedulerAlarmsProps {
  readonly functions: Readonly<Record<'Tick' | 'Scanner' | 'Worker', lambda.IFunction>>;
  readonly tables: Readonly<Record<'Jobs' | 'Wheel' | 'Slices', dynamodb.Table>>;
  readonly workQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly bus: events.IEventBus;
  /** The per-minute rule that invokes the tick. */
  readonly tickRule: events.IRule;
  readonly oldestWorkMessageAge: Duration;
  /** How long without a tick, or without a scan, before the clock alarms fire. */
  readonly stoppedAfter: Duration;
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
    if (!props.topic) {
      Annotations.of(this).addWarningV2(
        NO_TOPIC_WARNING,
        'cronfence: the alarms notify nobody: give alarms.topic (an SNS topic with a subscription that reaches a person), or route alarm state changes yourself and acknowledge this warning (docs/cdk.md, "Alarms")',
      );
    }
    const add: AddAlarm = (alarmId, metric, threshold, description, shape = {}) => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
        ...shape,
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
      add(
        `${name}Throttles`,
        fn.metricThrottles({ period: minute, statistic: 'Sum' }),
        1,
        `cronfence: the ${name.toLowerCase()} Lambda is throttled`,
      );
    }
    for (const [name, table] of Object.entries(props.tables)) {
      add(
        `${name}TableThrottles`,
        tableThrottles(name, table, minute),
        1,
        `cronfence: requests to the ${name.toLowerCase()} table are throttled`,
      );
    }
    this.clockAlarms(props, add);
    add('FencedOut', props.metrics.engine('fencedOut'), 1, 'cronfence: a write was refused by the fence (a worker lost its lease mid-run)');
    add('MissedSlices', props.metrics.engine('missed'), 1, 'cronfence: occurrences older than their catch-up window were recorded MISSED');
    add(
      'StaleJobs',
      props.metrics.engine('staleJobs'),
      1,
      "cronfence: the dead-man's switch found a job with no final slot within k of its intervals (the `stale` event and JobStale{jobId} name it)",
    );
  }

  /**
   * The scheduler stopped: watched on what AWS counts (EventBridge's invocations of the tick rule, Lambda's of the
   * scanner), not on anything the tick's or the scanner's own code reports, and with missing data breaching, since a
   * stopped clock reports nothing. The scanner's invocations are the end of the chain (rule, tick, scan queue,
   * scanner): a disabled rule, a failing tick and a throttled scanner all stop them.
   */
  private clockAlarms(props: SchedulerAlarmsProps, add: AddAlarm): void {
    const minute = Duration.minutes(1);
    const minutes = props.stoppedAfter.toMinutes({ integral: false });
    if (!Number.isInteger(minutes) || minutes < 2 || minutes > 60) {
      // One minute would page for a tick EventBridge delivered a few seconds late.
      throw new InvalidSchedulerPropError('alarms.stoppedAfter', props.stoppedAfter.toHumanString(), 'must be whole minutes from 2 to 60');
    }
    const stopped = {
      evaluationPeriods: minutes,
      datapointsToAlarm: minutes,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    };
    const after = props.stoppedAfter.toHumanString();
    add(
      'TicksStopped',
      new cloudwatch.Metric({
        namespace: 'AWS/Events',
        metricName: 'Invocations',
        dimensionsMap: { RuleName: props.tickRule.ruleName },
        statistic: 'Sum',
        period: minute,
      }),
      1,
      `cronfence: the per-minute rule invoked no tick for ${after} (rule disabled or deleted, or EventBridge cannot invoke the tick)`,
      stopped,
    );
    add(
      'ScansStopped',
      props.functions.Scanner.metricInvocations({ period: minute, statistic: 'Sum' }),
      1,
      `cronfence: no scan ran for ${after}: no slice is being created (rule disabled, tick failing, scan queue or scanner throttled)`,
      stopped,
    );
    // Two minutes out of three: one failed tick that EventBridge's retry repaired pages nobody.
    const errors = { evaluationPeriods: 3, datapointsToAlarm: 2 };
    add(
      'TickErrors',
      props.functions.Tick.metricErrors({ period: minute, statistic: 'Sum' }),
      1,
      'cronfence: the tick Lambda fails (scans are not requested)',
      errors,
    );
    add(
      'ScannerErrors',
      props.functions.Scanner.metricErrors({ period: minute, statistic: 'Sum' }),
      1,
      'cronfence: scanner invocations fail (crash, timeout or start-up error); a scan that fails alone is retried and dead-lettered after 20 tries (DeadLetters)',
      errors,
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
