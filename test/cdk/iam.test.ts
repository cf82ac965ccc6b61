import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { resourcesOf, testApp, EXAMPLE_WORKER } from './synth.ts';

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

const app = testApp();
const example = new SettlementStack(app, 'Example');
const template = Template.fromStack(example);

/**
 * Each role's grants are proven from the calls the bundles make, not pinned
 * here as written: test/artifacts/lambda-bundles.test.ts runs every bundle
 * against the emulator and checks each call against its role's policy, and
 * each granted action against the calls (or its listed reason).
 */
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
    const scheduler = new CronScheduler(stack, 'Cron', { ...EXAMPLE_WORKER, encryptionKey: new kms.Key(stack, 'Key') });
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
});
