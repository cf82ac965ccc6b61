/**
 * The app's jobs module: the handlers the worker Lambda runs (CronScheduler's
 * `jobs`), the schedules the stack declares, and the business table its
 * handler writes. `cronfence dev --jobs src/cron-jobs.ts` and
 * `cronfence/testing` read the same exports.
 *
 * The monthly settlement pays 1,200 merchants, more writes than one
 * transaction holds, so it commits in chunks (`ctx.commitChunk`): chunk n is
 * 40 payout rows and 40 wires recorded in the outbox, committed at most once
 * under the fence. A standby that takes over a crashed run resumes at the
 * first uncommitted chunk; the final `ctx.commit` writes the summary row.
 */
import { defineJob, type JobContext, type JobSpecInput, type LocalTable } from 'cronfence';
import { bankUrl, wireRequest } from './bank';

export const MERCHANTS_PER_CHUNK = 40;

/** The payouts table's name: set by the stack (workerEnvironment), or by cronfence dev and cronfence/testing locally. */
export function payoutsTable(): string {
  const name = process.env.PAYOUTS_TABLE;
  if (!name) throw new Error('PAYOUTS_TABLE is not set');
  return name;
}

/** A merchant's payout this month, in paise: a function of the merchant alone, the same on every run. */
export function payoutMinor(index: number): number {
  return 100_000 + (index % 50) * 1000;
}

function chunkOf(ctx: JobContext, merchants: number, n: number, url: string | undefined) {
  const first = n * MERCHANTS_PER_CHUNK;
  const payouts = Array.from({ length: Math.min(MERCHANTS_PER_CHUNK, merchants - first) }, (_, i) => ({
    merchant: `m${String(first + i + 1).padStart(4, '0')}`,
    amountMinor: payoutMinor(first + i),
  }));
  return {
    // Inside DynamoDB: the rows commit with the chunk record, on the fence, or not at all.
    writes: payouts.map(({ merchant, amountMinor }) => ({
      put: {
        tableName: payoutsTable(),
        item: { payoutId: `${ctx.executionKey}#${merchant}`, merchant, amountMinor, currency: 'INR', chunk: n, fence: ctx.fence },
      },
    })),
    // Outside: one wire per merchant, delivered by the outbox dispatcher with `Idempotency-Key: <executionKey>#<merchant>`.
    outbox:
      url === undefined
        ? []
        : payouts.map(({ merchant, amountMinor }) => wireRequest(url, merchant, amountMinor, `${ctx.executionKey}#${merchant}`)),
  };
}

export const merchantSettlement = defineJob('merchant-settlement', async (ctx) => {
  const merchants = Number(ctx.payload.merchants ?? 3);
  const url = bankUrl();
  const chunks = Math.ceil(merchants / MERCHANTS_PER_CHUNK);
  // A chunk an earlier run committed is skipped without running its work.
  for (let n = 0; n < chunks; n++) await ctx.commitChunk(n, () => chunkOf(ctx, merchants, n, url));
  const amountMinor = Array.from({ length: merchants }, (_, i) => payoutMinor(i)).reduce((a, b) => a + b, 0);
  await ctx.commit([
    {
      put: {
        tableName: payoutsTable(),
        item: { payoutId: ctx.executionKey, merchants, chunks, amountMinor, currency: 'INR', fence: ctx.fence },
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
