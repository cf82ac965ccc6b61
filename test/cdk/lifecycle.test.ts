import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { InvalidSchedulerPropError } from '../../lib/core/errors.ts';
import { retainedRepeatedNames, repeats } from './physical-names.ts';
import { logicalIdOf, resourcesOf, synthScheduler, testApp, type Resources, EXAMPLE_WORKER } from './synth.ts';

function retained(resources: Resources): string[] {
  return Object.values(resources)
    .filter((resource) => resource.DeletionPolicy === 'Retain')
    .map((resource) => resource.Type)
    .sort();
}

describe('the stack survives cdk destroy then cdk deploy', () => {
  it('no retained resource of the repo app, the defaults, or an alarmed scheduler has a name a redeploy repeats', () => {
    const alarmed = new Stack(testApp(), 'Alarmed');
    new CronScheduler(alarmed, 'Cron', {
      ...EXAMPLE_WORKER,
      alarms: { topic: new sns.Topic(alarmed, 'Pager') },
      dashboard: { dashboardName: 'cron' },
    });
    for (const template of [
      Template.fromStack(new SettlementStack(testApp(), 'Example')),
      synthScheduler().template,
      Template.fromStack(alarmed),
    ]) {
      expect(retainedRepeatedNames(template)).toEqual([]);
    }
  });

  it('finds a retained resource with a fixed name (the check can fail)', () => {
    const stack = new Stack(testApp(), 'Fixed');
    new logs.LogGroup(stack, 'Fixed', { logGroupName: '/aws/events/fixed', removalPolicy: RemovalPolicy.RETAIN });
    new logs.LogGroup(stack, 'ByStackName', { logGroupName: `/aws/events/${stack.stackName}`, removalPolicy: RemovalPolicy.RETAIN });
    new logs.LogGroup(stack, 'Gone', { logGroupName: '/aws/events/gone', removalPolicy: RemovalPolicy.DESTROY });
    const found = retainedRepeatedNames(Template.fromStack(stack));
    expect(found.map((name) => [name.type, name.property, name.value])).toEqual([
      ['AWS::Logs::LogGroup', 'LogGroupName', '/aws/events/fixed'],
      ['AWS::Logs::LogGroup', 'LogGroupName', '/aws/events/Fixed'],
    ]);
    expect(repeats({ 'Fn::Join': ['', ['/x/', { Ref: 'AWS::StackName' }]] })).toBe(true);
    expect(repeats({ 'Fn::Join': ['', ['/x/', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }]] })).toBe(false);
    expect(repeats({ Ref: 'SomeTable' })).toBe(false);
  });

  it("names the lifecycle audit log group after the stack instance's id, which every create makes new", () => {
    const { template, scheduler } = synthScheduler();
    const group = template.toJSON().Resources[logicalIdOf(scheduler.alarms!.lifecycleLog)];
    expect(group.DeletionPolicy).toBe('Retain');
    expect(group.Properties.LogGroupName).toEqual({
      'Fn::Join': [
        '',
        [
          expect.stringMatching(/^\/aws\/events\/cronfence\/Test-Cron-Alarms-[0-9A-F]{8}-$/),
          { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] },
        ],
      ],
    });
  });

  it('leaves exactly the tables and the log groups behind by default (docs/cdk.md, "Lifecycle")', () => {
    const { template } = synthScheduler();
    // Four tables; five functions' log groups (tick, scanner, worker, outbox; the jobs resource's exists once a job is added) + the audit group.
    expect(retained(template.toJSON().Resources)).toEqual([
      ...Array(4).fill('AWS::DynamoDB::Table'),
      ...Array(5).fill('AWS::Logs::LogGroup'),
    ]);
    const withJob = synthScheduler({}, (scheduler) =>
      scheduler.addJob('probe', { schedule: '* * * * *', handler: 'every-minute' }),
    ).template;
    expect(retained(withJob.toJSON().Resources).filter((type) => type === 'AWS::Logs::LogGroup')).toHaveLength(6);
  });
});

describe('deletion protection and what is retained (props)', () => {
  it('protects the retained tables from deletion by default', () => {
    const tables = Object.values(resourcesOf(synthScheduler().template, 'AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(4);
    for (const table of tables) expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
  });

  it('does not protect tables the stack is told to destroy, and refuses both at once naming the prop', () => {
    const destroyed = Object.values(resourcesOf(synthScheduler({ removalPolicy: RemovalPolicy.DESTROY }).template, 'AWS::DynamoDB::Table'));
    for (const table of destroyed) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties?.DeletionProtectionEnabled).toBe(false);
    }
    expect(() => synthScheduler({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: true })).toThrow(InvalidSchedulerPropError);
    expect(() => synthScheduler({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: true })).toThrow(
      /invalid deletionProtection true: .*removalPolicy DESTROY/,
    );
  });

  it('turns deletion protection off when asked, the tables still retained', () => {
    for (const table of Object.values(resourcesOf(synthScheduler({ deletionProtection: false }).template, 'AWS::DynamoDB::Table'))) {
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties?.DeletionProtectionEnabled).toBe(false);
    }
  });

  it('retains the tables but deletes the log groups with logRemovalPolicy DESTROY', () => {
    const { template } = synthScheduler({ logRemovalPolicy: RemovalPolicy.DESTROY });
    expect(retained(template.toJSON().Resources)).toEqual(Array(4).fill('AWS::DynamoDB::Table'));
    const groups = Object.values(resourcesOf(template, 'AWS::Logs::LogGroup'));
    expect(groups).toHaveLength(5);
    for (const group of groups) expect(group.DeletionPolicy).toBe('Delete');
  });

  it('deletes the log groups with the tables when only removalPolicy is DESTROY', () => {
    const { template } = synthScheduler({ removalPolicy: RemovalPolicy.DESTROY });
    expect(retained(template.toJSON().Resources)).toEqual([]);
  });
});
