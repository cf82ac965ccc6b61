import * as path from 'node:path';
import * as cdk from 'aws-cdk-lib/core';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { CronScheduler } from 'cronfence/cdk';
import { schedules } from '../src/cron-jobs';

export class SettlementAppStack extends cdk.Stack {
  readonly scheduler: CronScheduler;

  constructor(scope: Construct, id: string, props?: cdk.StackProps) {
    super(scope, id, props);

    const payouts = new dynamodb.Table(this, 'Payouts', {
      partitionKey: { name: 'payoutId', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    });

    this.scheduler = new CronScheduler(this, 'Cron', {
      shardCount: 4,
      // The worker Lambda is generated around this module and bundled with esbuild.
      jobs: path.join(__dirname, '../src/cron-jobs.ts'),
      // Where the outbox dispatcher (the construct's outbox Lambda, every minute) sends the wires.
      workerEnvironment: {
        PAYOUTS_TABLE: payouts.tableName,
        BANK_URL: this.node.tryGetContext('bankUrl') ?? 'https://bank.example.com/v1',
      },
    });
    // The handler writes its payout rows inside its chunk commits and its summary row inside the final commit.
    this.scheduler.grantCommit(payouts);
    // The jobs the module declares, checked against its handlers now, written to the jobs table at deploy.
    for (const { id: jobId, ...job } of schedules) this.scheduler.addJob(jobId, job);
  }
}
