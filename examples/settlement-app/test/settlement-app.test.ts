import * as cdk from 'aws-cdk-lib/core';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { SettlementAppStack } from '../lib/settlement-app-stack';

// Synthesized without bundling (an empty bundling-stacks context): the template, not the Lambda code.
const app = new cdk.App({ context: { 'aws:cdk:bundling-stacks': [] } });
const template = Template.fromStack(new SettlementAppStack(app, 'Test'));

test('the settlement job is declared for the worker that runs its handler', () => {
  template.hasResourceProperties('Custom::CronfenceJob', {
    Job: Match.serializedJson(Match.objectLike({ id: 'merchant-settlement', handler: 'merchant-settlement', timeZone: 'Asia/Kolkata' })),
    KnownHandlers: ['merchant-settlement'],
  });
});

test('the worker may write the payouts table inside its commit, and knows its name', () => {
  const workers = template.findResources('AWS::Lambda::Function', {
    Properties: {
      Description: Match.stringLikeRegexp('cronfence worker'),
      Environment: { Variables: Match.objectLike({ PAYOUTS_TABLE: Match.anyValue() }) },
    },
  });
  expect(Object.keys(workers)).toHaveLength(1);
  template.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({
          Action: Match.arrayWith(['dynamodb:PutItem', 'dynamodb:ConditionCheckItem']),
          Resource: Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('^Payouts'), 'Arn'] }),
        }),
      ]),
    },
  });
});

test('the outbox dispatcher runs every minute, delivering the wires the chunks record', () => {
  const dispatchers = template.findResources('AWS::Lambda::Function', {
    Properties: { Description: Match.stringLikeRegexp('cronfence outbox') },
  });
  expect(Object.keys(dispatchers)).toHaveLength(1);
  template.hasResourceProperties('AWS::Events::Rule', {
    ScheduleExpression: 'rate(1 minute)',
    Targets: Match.arrayWith([Match.objectLike({ Arn: { 'Fn::GetAtt': [Object.keys(dispatchers)[0], 'Arn'] } })]),
  });
});
