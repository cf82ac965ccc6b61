/**
 * The example jobs `cronfence dev` registers: a 6-field cron every 5 seconds,
 * a 5-field cron every minute, and the merchant settlement from the story,
 * which writes its payout row in the same transaction as its commit.
 */
import type { JobSpecInput } from '../core/job-spec.ts';
import { examplePayoutsTable } from '../aws/config.ts';
import type { TableDefinition } from '../aws/schema.ts';
import { defineJob } from '../engine/define-job.ts';

/** The settlement's business table (not part of cronfence's own schema). */
export const PAYOUTS_TABLE: TableDefinition = {
  logicalName: 'payouts',
  partitionKey: { name: 'payoutId', type: 'S' },
  globalSecondaryIndexes: [],
};

export function payoutsTableName(prefix?: string): string {
  return examplePayoutsTable(prefix);
}

export const everyFiveSeconds = defineJob('every-5-seconds', async (ctx) => {
  ctx.signal.throwIfAborted();
});

export const everyMinute = defineJob('every-minute', async (ctx) => {
  ctx.signal.throwIfAborted();
});

export const merchantSettlement = defineJob('merchant-settlement', async (ctx) => {
  const merchants = Number(ctx.payload.merchants ?? 3);
  // The payout row is keyed by the execution key: even a bug elsewhere could not pay this slice twice.
  await ctx.commit([
    {
      put: {
        tableName: payoutsTableName(),
        item: {
          payoutId: ctx.executionKey,
          jobId: ctx.jobId,
          scheduledAt: ctx.scheduledAt.toISOString(),
          merchants,
          amountMinor: merchants * 125_000,
          currency: 'INR',
          fence: ctx.fence,
          worker: ctx.worker,
        },
        conditionExpression: 'attribute_not_exists(payoutId)',
      },
    },
  ]);
});

export const EXAMPLE_HANDLERS = [everyFiveSeconds, everyMinute, merchantSettlement];

export const EXAMPLE_JOBS: JobSpecInput[] = [
  { id: 'every-5-seconds', schedule: '*/5 * * * * *', handler: everyFiveSeconds.name },
  { id: 'every-minute', schedule: '* * * * *', handler: everyMinute.name },
  {
    // In production this is monthly ("0 0 2 1 * *"); every minute at :30 here so a short dev run shows it.
    id: 'merchant-settlement',
    schedule: '30 * * * * *',
    timeZone: 'Asia/Kolkata',
    handler: merchantSettlement.name,
    payload: { merchants: 1200 },
  },
];
