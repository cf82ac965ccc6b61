import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { logicalIdOf, resourcesOf, testApp } from './synth.ts';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

function statements(template: Template): Array<{ policy: string; roles: unknown; statement: Statement }> {
  return Object.entries(resourcesOf(template, 'AWS::IAM::Policy')).flatMap(([policy, resource]) => {
    const properties = resource.Properties as { Roles: unknown; PolicyDocument: { Statement: Statement[] } };
    return properties.PolicyDocument.Statement.map((statement) => ({ policy, roles: properties.Roles, statement }));
  });
}

const actionsOf = (statement: Statement): string[] => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

/** Every allowed action of a function's role, with the resources as CloudFormation writes them. */
function grantsOf(template: Template, fn: lambda.Function): Map<string, string[]> {
  const roleId = logicalIdOf(fn.role as never);
  const grants = new Map<string, string[]>();
  for (const { roles, statement } of statements(template)) {
    if (JSON.stringify(roles) !== JSON.stringify([{ Ref: roleId }])) continue;
    const resources = (Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]).map((r) => JSON.stringify(r));
    for (const action of actionsOf(statement)) grants.set(action, [...(grants.get(action) ?? []), ...resources].sort());
  }
  return grants;
}

const arnOf = (construct: unknown): string => JSON.stringify({ 'Fn::GetAtt': [logicalIdOf(construct as never), 'Arn'] });
const indexOf = (table: unknown, index: string): string =>
  JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalIdOf(table as never), 'Arn'] }, `/index/${index}`]] });

const app = testApp();
const example = new SettlementStack(app, 'Example');
const template = Template.fromStack(example);
const s = example.scheduler;

describe('IAM', () => {
  it('allows no wildcard action in any policy statement', () => {
    const all = statements(template);
    expect(all.length).toBeGreaterThan(10);
    for (const { policy, statement } of all) {
      for (const action of actionsOf(statement)) expect(action, `${policy}: ${action}`).not.toContain('*');
      expect(statement.Effect).toBe('Allow');
    }
  });

  it('allows no wildcard action with a customer managed key either', () => {
    const stack = new Stack(testApp(), 'Keyed');
    const scheduler = new CronScheduler(stack, 'Cron', { encryptionKey: new kms.Key(stack, 'Key') });
    scheduler.addJob('keyed', { schedule: '* * * * *', handler: 'every-minute' });
    const business = new dynamodb.Table(stack, 'Business', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
    });
    scheduler.grantCommit(business);
    for (const { policy, statement } of statements(Template.fromStack(stack))) {
      for (const action of actionsOf(statement)) expect(action, `${policy}: ${action}`).not.toContain('*');
    }
  });

  it("gives the tick function SendMessage on the scan queue, and the dead-man's switch its reads and events only", () => {
    expect(Object.fromEntries(grantsOf(template, s.tickFunction))).toEqual({
      'sqs:SendMessage': [arnOf(s.scanQueue)],
      'dynamodb:Scan': [arnOf(s.jobsTable)],
      'dynamodb:BatchGetItem': [arnOf(s.slicesTable)],
      'dynamodb:Query': [arnOf(s.slicesTable)],
      'dynamodb:GetItem': [arnOf(s.wheelTable)],
      'dynamodb:PutItem': [arnOf(s.wheelTable)],
      'events:PutEvents': [arnOf(s.eventBus)],
    });
  });

  /** What an SQS event source grants its function on the queue it reads. */
  const consumeGrants = (queue: string[]) => ({
    'sqs:ReceiveMessage': queue,
    'sqs:DeleteMessage': queue,
    'sqs:ChangeMessageVisibility': queue,
    'sqs:GetQueueAttributes': queue,
    'sqs:GetQueueUrl': queue,
  });

  it('gives the scanner exactly the operations of a scan', () => {
    const consume = [arnOf(s.scanQueue)];
    expect(Object.fromEntries(grantsOf(template, s.scannerFunction))).toEqual({
      // The wheel: cursor, inbox, entries. The jobs: read, never written. The slices: the reconciler's read and its
      // ENQUEUED ones, range records, the sweep.
      'dynamodb:GetItem': [arnOf(s.wheelTable)],
      'dynamodb:Query': [arnOf(s.wheelTable), arnOf(s.slicesTable), indexOf(s.slicesTable, 'sweep')].sort(),
      'dynamodb:PutItem': [arnOf(s.wheelTable)],
      'dynamodb:DeleteItem': [arnOf(s.wheelTable)],
      'dynamodb:BatchWriteItem': [arnOf(s.wheelTable)],
      'dynamodb:UpdateItem': [arnOf(s.wheelTable), arnOf(s.slicesTable)].sort(),
      'dynamodb:BatchGetItem': [arnOf(s.jobsTable)],
      'dynamodb:Scan': [arnOf(s.jobsTable)],
      'sqs:SendMessage': [arnOf(s.deadLetterQueue), arnOf(s.scanQueue), arnOf(s.workQueue)].sort(),
      'events:PutEvents': [arnOf(s.eventBus)],
      ...consumeGrants(consume),
    });
  });

  it('gives the worker the slice, dead-letter, bus and granted business-table operations, and those of a one-time job deleting itself and of the overlap policy', () => {
    const consume = [arnOf(s.workQueue)];
    const payouts = arnOf(example.node.findChild('Payouts'));
    expect(Object.fromEntries(grantsOf(template, s.workerFunction))).toEqual({
      'dynamodb:GetItem': [arnOf(s.chunksTable), arnOf(s.jobsTable), arnOf(s.slicesTable)].sort(),
      'dynamodb:UpdateItem': [arnOf(s.slicesTable), payouts].sort(),
      'dynamodb:Query': [arnOf(s.chunksTable), arnOf(s.slicesTable), indexOf(s.slicesTable, 'sweep')].sort(),
      'dynamodb:PutItem': [arnOf(s.chunksTable), arnOf(s.jobsTable), arnOf(s.slicesTable), payouts].sort(),
      'dynamodb:DeleteItem': [payouts],
      'dynamodb:ConditionCheckItem': [arnOf(s.slicesTable), payouts].sort(),
      'sqs:SendMessage': [arnOf(s.deadLetterQueue)],
      'events:PutEvents': [arnOf(s.eventBus)],
      ...consumeGrants(consume),
    });
  });

  it('gives the outbox dispatcher the outbox index, take and record on the chunks table, and the dead-letter queue only', () => {
    expect(s.outboxFunction).toBeDefined();
    expect(Object.fromEntries(grantsOf(template, s.outboxFunction!))).toEqual({
      'dynamodb:Query': [indexOf(s.chunksTable, 'outbox')],
      'dynamodb:UpdateItem': [arnOf(s.chunksTable)],
      'sqs:SendMessage': [arnOf(s.deadLetterQueue)],
    });
  });

  it('gives the jobs custom resource the JobRepository put and delete operations', () => {
    const fn = s.node.findChild('JobsResource') as lambda.Function;
    expect(Object.fromEntries(grantsOf(template, fn))).toEqual({
      'dynamodb:GetItem': [arnOf(s.jobsTable)],
      'dynamodb:PutItem': [arnOf(s.jobsTable), arnOf(s.wheelTable)].sort(),
      'dynamodb:DeleteItem': [arnOf(s.jobsTable)],
      'dynamodb:Query': [arnOf(s.slicesTable)],
      'dynamodb:UpdateItem': [arnOf(s.slicesTable)],
    });
  });
});
