/**
 * The outbox dispatcher of a CronScheduler: a Lambda (functions/outbox.ts,
 * `createOutboxDispatcher`) on a per-minute EventBridge rule that delivers
 * the outbound requests chunked commits recorded (`ctx.commitChunk(n, {
 * outbox })`), each at least once with its idempotency key and fence,
 * retrying with backoff and dead-lettering what keeps failing. One
 * invocation dispatches for up to 50 s; two at once are safe (each request
 * is taken by one of them).
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { cronfenceFunction, ENTRIES } from './functions.ts';
import { grantOutboxDispatcher, type SchedulerResources } from './permissions.ts';

export interface OutboxDispatcherProps {
  readonly resources: SchedulerResources;
  readonly environment: Record<string, string>;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

export interface OutboxDispatcherParts {
  readonly outboxFunction: lambda.Function;
  readonly outboxRule: events.Rule;
}

/** How often the dispatcher runs; an invocation delivers for up to 50 s (OUTBOX_BUDGET_MS), under its 60 s timeout. */
export const OUTBOX_INTERVAL = Duration.minutes(1);

export function addOutboxDispatcher(scope: Construct, props: OutboxDispatcherProps): OutboxDispatcherParts {
  const outboxFunction = cronfenceFunction(scope, 'Outbox', {
    entry: ENTRIES.outbox,
    description: 'cronfence outbox: delivers the outbound requests chunked commits recorded',
    timeout: Duration.seconds(60),
    memorySize: 256,
    environment: props.environment,
    logRetentionDays: props.logRetentionDays,
    removalPolicy: props.removalPolicy,
  });
  grantOutboxDispatcher(outboxFunction, props.resources);
  const outboxRule = new events.Rule(scope, 'OutboxRule', {
    description: 'cronfence: the outbox dispatcher, every minute',
    schedule: events.Schedule.rate(OUTBOX_INTERVAL),
    targets: [new targets.LambdaFunction(outboxFunction, { retryAttempts: 2, maxEventAge: OUTBOX_INTERVAL })],
  });
  return { outboxFunction, outboxRule };
}
