/**
 * The app's jobs module: the handlers the worker Lambda runs (CronScheduler's
 * `jobs`), the schedules the stack declares, and the business table its
 * handler writes. `cronfence dev --jobs src/cron-jobs.ts` and
 * `cronfence/testing` read the same exports.
 */
import { defineJob, type JobSpecInput, type LocalTable } from 'cronfence';
import { bank } from './bank';

/** The payouts table's name: set by the stack (workerEnvironment), or by cronfence dev and cronfence/testing locally. */
export function payoutsTable(): string {
  const name = process.env.PAYOUTS_TABLE;
  if (!name) throw new Error('PAYOUTS_TABLE is not set');
  return name;
}

export const merchantSettlement = defineJob('merchant-settlement', async (ctx) => {
  const merchants = Number(ctx.payload.merchants ?? 3);
  const amountMinor = merchants * 125_000;
  // Outside DynamoDB: the execution key as the idempotency key, the fence as the fencing token.
  const wire = await bank.wire({ idempotencyKey: ctx.executionKey, fence: ctx.fence, amountMinor, currency: 'INR' }, ctx.signal);
  // Inside: the payout row commits with the slice, on the fence, or not at all.
  await ctx.commit([
    {
      put: {
        tableName: payoutsTable(),
        item: { payoutId: ctx.executionKey, wireId: wire.id, merchants, amountMinor, currency: 'INR', fence: ctx.fence },
        conditionExpression: 'attribute_not_exists(payoutId)',
      },
    },
  ]);
});

/** 02:00 on the 1st of every month, India time. */
export const schedules: JobSpecInput[] = [
  {
    id: 'merchant-settlement',
    schedule: '0 0 2 1 * *',
    timeZone: 'Asia/Kolkata',
    handler: merchantSettlement.name,
    payload: { merchants: 1200 },
    policies: { maxAttempts: 5, timeoutMs: 90_000 },
  },
];

export const tables: LocalTable[] = [{ name: 'payouts', env: 'PAYOUTS_TABLE', partitionKey: 'payoutId' }];
