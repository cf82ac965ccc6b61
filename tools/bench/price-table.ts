/**
 * Public on-demand prices, us-east-1, in US dollars. One file, one date: when
 * a price changes, change it here and the date with it. Free tiers are left
 * out (they are per account, not per execution).
 */
export const PRICE_TABLE = {
  /** When these figures were taken from the AWS pricing pages. */
  asOf: '2025-06',
  region: 'us-east-1',
  sources: [
    'https://aws.amazon.com/dynamodb/pricing/on-demand/ (Standard table class, after the 2024-11-01 on-demand price cut)',
    'https://aws.amazon.com/sqs/pricing/ (standard queue, each 64 KB chunk of a request is one request)',
    'https://aws.amazon.com/lambda/pricing/ (Arm, first tier)',
    'https://aws.amazon.com/eventbridge/pricing/ (custom events on a bus; Scheduler invocations)',
  ],
  dynamoWriteRequestUnitPerMillion: 0.625,
  dynamoReadRequestUnitPerMillion: 0.125,
  sqsRequestPerMillion: 0.4,
  lambdaRequestPerMillion: 0.2,
  /** Arm (Graviton), which the CDK construct deploys. */
  lambdaArmGbSecond: 0.0000133334,
  eventBridgeCustomEventPerMillion: 1.0,
  eventBridgeSchedulerInvocationPerMillion: 1.0,
} as const;

export type PriceTable = typeof PRICE_TABLE;

/** Lambda memory sizes of the CDK construct (lib/cdk/cron-scheduler.ts), in MB. */
export const CONSTRUCT_LAMBDA_MEMORY_MB = { worker: 256, scanner: 512, tick: 256 } as const;

/**
 * The construct's work queue visibility with its default worker timeout (2
 * minutes): an event source mapping needs at least the function's timeout.
 * The bench's burst runs with it, so every claim's visibility change is
 * counted as on Lambda (test/cdk/scheduler.test.ts checks it against the
 * synthesized queue).
 */
export const CONSTRUCT_WORK_QUEUE_VISIBILITY_MS = 120_000;

/** EventBridge Scheduler's documented defaults, for the side-by-side. */
export const EVENTBRIDGE_SCHEDULER = {
  usdPerMillionInvocations: PRICE_TABLE.eventBridgeSchedulerInvocationPerMillion,
  defaultInvocationsPerSecond: 1000,
  precision: 'one minute',
  delivery: 'at least once',
} as const;
