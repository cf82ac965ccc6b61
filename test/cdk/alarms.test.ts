import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { DEFAULT_METRICS_NAMESPACE, ENGINE_METRICS, SERVICE_DIMENSION } from '../../lib/lambda/metric-names.ts';
import { logicalIdOf, resourcesOf, synthScheduler, testApp, EXAMPLE_WORKER } from './synth.ts';

const stack = new Stack(testApp(), 'Alarmed');
const topic = new sns.Topic(stack, 'Pager');
const scheduler = new CronScheduler(stack, 'Cron', { ...EXAMPLE_WORKER, alarms: { topic } });
const template = Template.fromStack(stack);
const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties as Record<string, unknown>);

describe('alarms', () => {
  it('alarms when the dead-letter queue is not empty', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(scheduler.deadLetterQueue), 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on the age of the oldest work message', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalIdOf(scheduler.workQueue), 'QueueName'] } }],
      Threshold: 900,
    });
  });

  it('alarms on throttles of each function and each table', () => {
    const lambdaThrottles = alarms.filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === 'Throttles');
    expect(lambdaThrottles).toHaveLength(3);
    const tableThrottles = alarms.filter((a) => JSON.stringify(a.Metrics ?? []).includes('ThrottledRequests'));
    // Jobs, wheel, slices.
    expect(tableThrottles).toHaveLength(3);
    expect(JSON.stringify(tableThrottles[0]?.Metrics)).toContain('TransactWriteItems');
  });

  it('copies fenced_out, missed, dead and stale events from the bus into the audit log group', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: logicalIdOf(scheduler.eventBus) },
      EventPattern: { source: ['cronfence'], 'detail-type': ['fenced_out', 'missed', 'dead', 'stale'] },
    });
    // The policy document is a Fn::Join (it names the log group's ARN): check its text.
    const policy = JSON.stringify(Object.values(resourcesOf(template, 'AWS::Logs::ResourcePolicy'))[0]?.Properties?.PolicyDocument);
    expect(policy).toContain('events.amazonaws.com');
    expect(policy).toContain('logs:CreateLogStream');
    expect(policy).toContain('logs:PutLogEvents');
    const auditRule = Object.values(resourcesOf(template, 'AWS::Events::Rule')).find((rule) => rule.Properties?.EventBusName);
    const target = JSON.stringify(auditRule?.Properties?.Targets);
    expect(target).toContain(':log-group:');
    expect(target).toContain(JSON.stringify({ Ref: logicalIdOf(scheduler.alarms?.lifecycleLog as never) }));
  });

  it('alarms on fenced-out writes and missed slices from the metrics the Lambdas write (no metric filter counts them twice)', () => {
    for (const metric of [ENGINE_METRICS.fencedOut, ENGINE_METRICS.missed]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: DEFAULT_METRICS_NAMESPACE,
        MetricName: metric.name,
        Dimensions: [{ Name: SERVICE_DIMENSION, Value: 'Alarmed/Cron' }],
        Statistic: 'Sum',
        Period: 60,
        Threshold: 1,
      });
    }
    template.resourceCountIs('AWS::Logs::MetricFilter', 0);
    // Each function is told the same namespace and service, so what it writes is what the alarms watch.
    for (const fn of [scheduler.tickFunction, scheduler.scannerFunction, scheduler.workerFunction]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: Match.absent(),
        Environment: {
          Variables: Match.objectLike({ POWERTOOLS_METRICS_NAMESPACE: 'Cronfence', POWERTOOLS_SERVICE_NAME: 'Alarmed/Cron' }),
        },
        Description: Match.stringLikeRegexp(`^cronfence ${fn.node.id.toLowerCase()}`),
      });
    }
  });

  it('notifies the topic from every alarm', () => {
    expect(alarms).toHaveLength(15);
    for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: logicalIdOf(topic) }]);
  });

  it('creates none when disabled', () => {
    const { template: quiet } = synthScheduler({ alarms: { enabled: false } });
    quiet.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    quiet.resourceCountIs('AWS::Logs::ResourcePolicy', 0);
  });
});
