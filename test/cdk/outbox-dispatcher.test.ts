/**
 * The construct's outbox dispatcher (lib/cdk/outbox-dispatcher.ts): a Lambda
 * running functions/outbox.ts every minute with the installation's
 * environment (the chunks table above all), 60 s to deliver in, and none at
 * all with `outboxDispatcher: false`. Its IAM grants: test/cdk/iam.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { logicalIdOf, resourcesOf, synthScheduler } from './synth.ts';

describe('CronScheduler outbox dispatcher', () => {
  const { scheduler, template } = synthScheduler();

  it('runs the outbox Lambda every minute, with the chunks table in its environment and a 60 s timeout', () => {
    const fn = scheduler.outboxFunction;
    expect(fn).toBeDefined();
    const id = logicalIdOf(fn!);
    const properties = resourcesOf(template, 'AWS::Lambda::Function')[id]?.Properties as {
      Timeout: number;
      Description: string;
      Environment: { Variables: Record<string, unknown> };
    };
    expect(properties.Timeout).toBe(60);
    expect(properties.Description).toMatch(/outbox/);
    expect(properties.Environment.Variables.CRONFENCE_CHUNKS_TABLE).toEqual({ Ref: logicalIdOf(scheduler.chunksTable) });
    expect(properties.Environment.Variables.CRONFENCE_DEAD_LETTER_QUEUE_URL).toEqual({ Ref: logicalIdOf(scheduler.deadLetterQueue) });

    const rule = resourcesOf(template, 'AWS::Events::Rule')[logicalIdOf(scheduler.outboxRule!)]?.Properties as {
      ScheduleExpression: string;
      Targets: { Arn: unknown; RetryPolicy?: { MaximumRetryAttempts: number } }[];
    };
    expect(rule.ScheduleExpression).toBe('rate(1 minute)');
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0]?.Arn).toEqual({ 'Fn::GetAtt': [id, 'Arn'] });
    expect(rule.Targets[0]?.RetryPolicy?.MaximumRetryAttempts).toBe(2);
    // EventBridge may invoke it.
    const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).map(
      (p) => p.Properties as { FunctionName: unknown; Principal: string },
    );
    expect(permissions).toContainEqual(
      expect.objectContaining({ FunctionName: { 'Fn::GetAtt': [id, 'Arn'] }, Principal: 'events.amazonaws.com' }),
    );
  });

  it('has no outbox Lambda or rule with outboxDispatcher: false', () => {
    const without = synthScheduler({ outboxDispatcher: false });
    expect(without.scheduler.outboxFunction).toBeUndefined();
    expect(without.scheduler.outboxRule).toBeUndefined();
    const descriptions = Object.values(resourcesOf(without.template, 'AWS::Lambda::Function')).map((fn) =>
      String(fn.Properties?.Description),
    );
    expect(descriptions.some((text) => text.includes('outbox'))).toBe(false);
    expect(Object.keys(resourcesOf(without.template, 'AWS::Lambda::Function'))).toHaveLength(
      Object.keys(resourcesOf(template, 'AWS::Lambda::Function')).length - 1,
    );
  });
});
