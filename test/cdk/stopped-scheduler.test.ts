/**
 * A scheduler that stopped pages someone: alarms on what AWS counts (EventBridge's invocations of the tick rule,
 * Lambda's invocations and errors of the tick and the scanner), with missing data breaching where a stopped clock
 * reports nothing; reserved concurrency for the clock; the scanner's timeout against its scan budget; a synth warning
 * for alarms without a topic.
 */
import { Annotations as CoreAnnotations, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { NO_TOPIC_WARNING } from '../../lib/cdk/alarms.ts';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { InvalidSchedulerPropError } from '../../lib/core/errors.ts';
import { DEFAULT_METRICS_NAMESPACE } from '../../lib/lambda/metric-names.ts';
import { logicalIdOf, resourcesOf, synthScheduler, testApp, EXAMPLE_WORKER } from './synth.ts';

const { template, scheduler } = synthScheduler();
type Alarm = Record<string, unknown>;
const alarms = Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map(([id, alarm]) => ({
  id,
  ...(alarm.Properties as Alarm),
}));
const alarmNamed = (name: string): Alarm => {
  const found = alarms.filter((alarm) => alarm.id.startsWith(`CronAlarms${name}`));
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe('the alarms that catch a stopped scheduler', () => {
  it("breaches when the tick rule invokes nothing for 5 minutes, on EventBridge's own count, missing data breaching", () => {
    expect(alarmNamed('TicksStopped')).toMatchObject({
      Namespace: 'AWS/Events',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'RuleName', Value: { Ref: logicalIdOf(scheduler.tickRule) } }],
      Statistic: 'Sum',
      Period: 60,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      TreatMissingData: 'breaching',
    });
  });

  it("breaches when no scan runs for 5 minutes, on Lambda's count of the scanner's invocations, missing data breaching", () => {
    expect(alarmNamed('ScansStopped')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(scheduler.scannerFunction) } }],
      Statistic: 'Sum',
      Period: 60,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      TreatMissingData: 'breaching',
    });
  });

  it("watches nothing the engine's own code reports (no engine metric, no metric filter)", () => {
    for (const name of ['TicksStopped', 'ScansStopped', 'TickErrors', 'ScannerErrors']) {
      const alarm = alarmNamed(name);
      expect(alarm.Namespace).not.toBe(DEFAULT_METRICS_NAMESPACE);
      expect(String(alarm.Namespace)).toMatch(/^AWS\//);
    }
  });

  it('alarms on tick and scanner errors in two minutes out of three, missing data fine', () => {
    for (const [name, fn] of [
      ['TickErrors', scheduler.tickFunction],
      ['ScannerErrors', scheduler.scannerFunction],
    ] as const) {
      expect(alarmNamed(name)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(fn) } }],
        Statistic: 'Sum',
        Period: 60,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('takes the stopped time as alarms.stoppedAfter, in whole minutes from 2 to 60, naming the prop otherwise', () => {
    const slow = synthScheduler({ alarms: { stoppedAfter: Duration.minutes(10) } });
    slow.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Invocations',
      Namespace: 'AWS/Lambda',
      EvaluationPeriods: 10,
      DatapointsToAlarm: 10,
    });
    expect(() => synthScheduler({ alarms: { stoppedAfter: Duration.seconds(90) } })).toThrow(InvalidSchedulerPropError);
    expect(() => synthScheduler({ alarms: { stoppedAfter: Duration.seconds(90) } })).toThrow(
      /invalid alarms.stoppedAfter "1 minute 30 seconds": must be whole minutes from 2 to 60/,
    );
    expect(() => synthScheduler({ alarms: { stoppedAfter: Duration.minutes(1) } })).toThrow(/alarms.stoppedAfter/);
  });
});

describe('alarms need a topic to reach a person', () => {
  it('warns at synth when the alarms have no topic', () => {
    const stack = new Stack(testApp(), 'Quiet');
    new CronScheduler(stack, 'Cron', EXAMPLE_WORKER);
    Annotations.fromStack(stack).hasWarning('/Quiet/Cron/Alarms', Match.stringLikeRegexp(`notify nobody.*\\[ack: ${NO_TOPIC_WARNING}\\]`));
  });

  it('does not warn with a topic, which every alarm notifies', () => {
    const stack = new Stack(testApp(), 'Paged');
    const topic = new sns.Topic(stack, 'Pager');
    new CronScheduler(stack, 'Cron', { ...EXAMPLE_WORKER, alarms: { topic } });
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
    const paged = Object.values(resourcesOf(Template.fromStack(stack), 'AWS::CloudWatch::Alarm'));
    for (const alarm of paged) expect(alarm.Properties?.AlarmActions).toEqual([{ Ref: logicalIdOf(topic) }]);
  });

  it('does not warn once the team acknowledges it (alarms routed some other way)', () => {
    const stack = new Stack(testApp(), 'Routed');
    CoreAnnotations.of(stack).acknowledgeWarning(NO_TOPIC_WARNING, 'alarm state changes go to our EventBridge rule');
    new CronScheduler(stack, 'Cron', EXAMPLE_WORKER);
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('the clock keeps its capacity', () => {
  const fn = (id: string) => template.toJSON().Resources[id].Properties as Record<string, unknown>;

  it('reserves concurrency for the tick (2) and the scanner (the shard count), none for the worker, and caps the scan mapping at it', () => {
    expect(fn(logicalIdOf(scheduler.tickFunction)).ReservedConcurrentExecutions).toBe(2);
    expect(fn(logicalIdOf(scheduler.scannerFunction)).ReservedConcurrentExecutions).toBe(8);
    expect(fn(logicalIdOf(scheduler.workerFunction)).ReservedConcurrentExecutions).toBeUndefined();
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(scheduler.scannerFunction) },
      ScalingConfig: { MaximumConcurrency: 8 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(scheduler.workerFunction) },
      ScalingConfig: Match.absent(),
    });
  });

  it('reserves at least 2 for the scanner (a mapping cannot go lower), and takes the props, or false for none', () => {
    const one = synthScheduler({ shardCount: 1 });
    expect(
      (one.template.toJSON().Resources[logicalIdOf(one.scheduler.scannerFunction)].Properties as Record<string, unknown>)
        .ReservedConcurrentExecutions,
    ).toBe(2);
    const custom = synthScheduler({ tickReservedConcurrency: 3, scannerReservedConcurrency: 20, scannerBatch: { maxConcurrency: 10 } });
    const props = (id: string) => custom.template.toJSON().Resources[id].Properties as Record<string, unknown>;
    expect(props(logicalIdOf(custom.scheduler.tickFunction)).ReservedConcurrentExecutions).toBe(3);
    expect(props(logicalIdOf(custom.scheduler.scannerFunction)).ReservedConcurrentExecutions).toBe(20);
    custom.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(custom.scheduler.scannerFunction) },
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const none = synthScheduler({ tickReservedConcurrency: false, scannerReservedConcurrency: false });
    for (const f of [none.scheduler.tickFunction, none.scheduler.scannerFunction]) {
      expect(
        (none.template.toJSON().Resources[logicalIdOf(f)].Properties as Record<string, unknown>).ReservedConcurrentExecutions,
      ).toBeUndefined();
    }
    none.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(none.scheduler.scannerFunction) },
      ScalingConfig: Match.absent(),
    });
  });

  it('refuses reservations the clock cannot run on, naming the prop and value', () => {
    expect(() => synthScheduler({ scannerReservedConcurrency: 1 })).toThrow(
      /invalid scannerReservedConcurrency 1: must be a whole number from 2 to 1000/,
    );
    expect(() => synthScheduler({ tickReservedConcurrency: 0 })).toThrow(
      /invalid tickReservedConcurrency 0: must be a whole number from 1 to 1000/,
    );
    expect(() => synthScheduler({ scannerReservedConcurrency: 4, scannerBatch: { maxConcurrency: 5 } })).toThrow(InvalidSchedulerPropError);
    expect(() => synthScheduler({ scannerReservedConcurrency: 4, scannerBatch: { maxConcurrency: 5 } })).toThrow(
      /invalid scannerBatch.maxConcurrency 5: must be at most scannerReservedConcurrency \(4\)/,
    );
  });
});

describe('the scanner timeout against the scan budget', () => {
  it('refuses a scanner timeout under the 20 s budget plus 10 s, naming the prop and value', () => {
    expect(() => synthScheduler({ scannerTimeout: Duration.seconds(25) })).toThrow(InvalidSchedulerPropError);
    expect(() => synthScheduler({ scannerTimeout: Duration.seconds(25) })).toThrow(
      /invalid scannerTimeout "25 seconds": must be at least 30 seconds: a scan runs for up to its 20 seconds budget/,
    );
  });

  it('takes 30 s and up', () => {
    const { template: ok, scheduler: s } = synthScheduler({ scannerTimeout: Duration.seconds(30) });
    expect((ok.toJSON().Resources[logicalIdOf(s.scannerFunction)].Properties as Record<string, unknown>).Timeout).toBe(30);
  });
});
