/**
 * Example: the merchant settlement from the story, deployed with
 * CronScheduler. The payout rows are written in chunked commits (the
 * chunks' transactions), so the worker is granted the payouts table with `grantCommit`.
 */
import { Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { PAYOUTS_TABLE, everyFiveSeconds, everyMinute, merchantSettlement } from '../examples/jobs/examples.ts';
import { registry } from '../examples/jobs/index.ts';
import { CronScheduler } from '../lib/cdk/cron-scheduler.ts';
import type { CronSchedulerProps } from '../lib/cdk/props.ts';
import { schemaTable } from '../lib/cdk/schema-resources.ts';

export interface SettlementStackProps extends StackProps {
  /** Passed to the CronScheduler. @default shardCount 4 and the example jobs' worker, everything else the construct's defaults */
  readonly scheduler?: CronSchedulerProps;
}

export class SettlementStack extends Stack {
  readonly scheduler: CronScheduler;

  constructor(scope: Construct, id: string, props: SettlementStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.scheduler?.removalPolicy ?? RemovalPolicy.RETAIN;
    const payouts = schemaTable(this, 'Payouts', PAYOUTS_TABLE, {
      removalPolicy,
      deletionProtection: removalPolicy !== RemovalPolicy.DESTROY,
      pointInTimeRecovery: true,
    });

    this.scheduler = new CronScheduler(this, 'Cron', {
      shardCount: 4,
      // The example jobs' worker (examples/jobs/worker.ts); your app gives `jobs` instead (docs/cdk.md).
      workerEntry: fileURLToPath(new URL('../examples/jobs/worker.ts', import.meta.url)),
      handlers: registry,
      workerEnvironment: { CRONFENCE_PAYOUTS_TABLE: payouts.tableName },
      ...props.scheduler,
    });
    this.scheduler.grantCommit(payouts);

    // 06:00 on the 1st of every month, India time; the handler pays 1,200 merchants in 30 chunks.
    this.scheduler.addJob('merchant-settlement', {
      schedule: '0 0 6 1 * *',
      timeZone: 'Asia/Kolkata',
      handler: merchantSettlement,
      payload: { merchants: 1200 },
      policies: { maxAttempts: 5, timeoutMs: Duration.seconds(90).toMilliseconds(), catchUpWindowMs: Duration.hours(6).toMilliseconds() },
    });
    this.scheduler.addJob('minutely-probe', { schedule: '* * * * *', handler: everyMinute });
    this.scheduler.addJob('five-second-probe', {
      schedule: '*/5 * * * * *',
      handler: everyFiveSeconds,
      policies: { leaseMs: 6000, heartbeatMs: 2000 },
    });
  }
}
