/**
 * The example jobs `cronfence dev` registers: a 6-field cron every 5 seconds,
 * a 5-field cron every minute, and the merchant settlement from the story
 * (settlement.ts): 1,200 payouts in chunked commits, monthly at 06:00 in
 * Kolkata, and its fast variant every minute for dev runs, tests and drills.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { examplePayoutsTable } from '../../lib/aws/config.ts';
import type { TableDefinition } from '../../lib/aws/schema.ts';
import { defineJob } from '../../lib/engine/define-job.ts';
import { merchantSettlement, SETTLEMENT_MERCHANTS } from './settlement.ts';

export { merchantSettlement } from './settlement.ts';

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

export const EXAMPLE_HANDLERS = [everyFiveSeconds, everyMinute, merchantSettlement];

export const EXAMPLE_JOBS: JobSpecInput[] = [
  { id: 'every-5-seconds', schedule: '*/5 * * * * *', handler: everyFiveSeconds.name },
  { id: 'every-minute', schedule: '* * * * *', handler: everyMinute.name },
  {
    // The story's schedule: 06:00 on the 1st of every month, Kolkata time (00:30 UTC).
    id: 'merchant-settlement',
    schedule: '0 0 6 1 * *',
    timeZone: 'Asia/Kolkata',
    handler: merchantSettlement.name,
    payload: { merchants: SETTLEMENT_MERCHANTS },
  },
  {
    // The same job every minute at :30, so a short dev run, a test or a drill sees it.
    id: 'merchant-settlement-fast',
    schedule: '30 * * * * *',
    timeZone: 'Asia/Kolkata',
    handler: merchantSettlement.name,
    payload: { merchants: SETTLEMENT_MERCHANTS },
  },
];
