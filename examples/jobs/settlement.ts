/**
 * The story's job: the monthly settlement of 1,200 merchants, paid once.
 *
 * Each merchant's payout is a business row (`<executionKey>#<merchant>`) and,
 * when the payload names a bank, an outbound wire in the outbox with
 * `Idempotency-Key: <executionKey>#<merchant>`. Merchants go in chunks of 40
 * (40 rows + 40 wires + fence check + chunk record = 82 transaction items),
 * 30 chunks in all. The final commit writes the settlement's summary row
 * (`payoutId = executionKey`) and marks the slice SUCCEEDED.
 *
 * A chunk's work must be a function of the execution alone (the merchant
 * list and amounts as of the scheduled instant), so that chunk n means the
 * same merchants to the worker that crashed and to the standby that resumes.
 * Each chunk is committed with its merchant ids as its input
 * (`ctx.commitChunk(n, work, { input })`), so a list that changed between
 * attempts anyway is caught, not paid around: a merchant removed before a
 * committed chunk moves every later one a place, so one would fall between
 * the committed chunks and the rest and never be paid. Instead the standby
 * finds a committed chunk named with other merchants (or one its shorter
 * list leaves out) and the slot goes DEAD with that reason; a list that only
 * grew at its end (new merchants in new chunks) is accounted for, and runs.
 */
import { realSleep } from '../../lib/core/clock.ts';
import type { ChunkWork } from '../../lib/core/chunks.ts';
import { shardOf } from '../../lib/core/shard.ts';
import { defineJob, type JobContext } from '../../lib/engine/define-job.ts';
import { examplePayoutsTable } from '../../lib/aws/config.ts';

export const SETTLEMENT_MERCHANTS = 1200;
export const MERCHANTS_PER_CHUNK = 40;

export interface SettlementPlan {
  readonly merchants: number;
  readonly perChunk: number;
  readonly chunks: number;
  /** Where wires go (`POST <bankUrl>/wires`); no wires when unset. */
  readonly bankUrl?: string;
  /** Simulated work per chunk (the drill's window to kill a worker mid-batch). */
  readonly chunkWorkMs: number;
  /** Where the payout rows go (the bench's own table). @default examplePayoutsTable() */
  readonly payoutsTable?: string;
}

export function settlementPlan(payload: Readonly<Record<string, unknown>>): SettlementPlan {
  const merchants = Number(payload.merchants ?? SETTLEMENT_MERCHANTS);
  const perChunk = Number(payload.merchantsPerChunk ?? MERCHANTS_PER_CHUNK);
  const bankUrl = typeof payload.bankUrl === 'string' ? payload.bankUrl : undefined;
  const payoutsTable = typeof payload.payoutsTable === 'string' ? payload.payoutsTable : undefined;
  return {
    merchants,
    perChunk,
    chunks: Math.ceil(merchants / perChunk),
    bankUrl,
    chunkWorkMs: Number(payload.chunkWorkMs ?? 0),
    payoutsTable,
  };
}

export function merchantId(index: number): string {
  return `m${String(index + 1).padStart(4, '0')}`;
}

/** The month's payout of a merchant in paise: deterministic per merchant and occurrence. */
export function payoutMinor(merchant: string, scheduledAt: Date): number {
  return 1_000_000 + shardOf(`${merchant}@${scheduledAt.toISOString().slice(0, 7)}`, 5_000_000);
}

/** The merchants of chunk n: what it is made of (its `input`). */
export function chunkMerchants(plan: SettlementPlan, n: number): string[] {
  const first = n * plan.perChunk;
  return Array.from({ length: Math.max(0, Math.min(plan.perChunk, plan.merchants - first)) }, (_, i) => merchantId(first + i));
}

/** Chunk n's payout rows and wires. */
export function settlementChunk(
  ctx: Pick<JobContext, 'executionKey' | 'jobId' | 'scheduledAt' | 'fence' | 'worker'>,
  plan: SettlementPlan,
  n: number,
): ChunkWork {
  const payouts = chunkMerchants(plan, n).map((merchant) => ({ merchant, amountMinor: payoutMinor(merchant, ctx.scheduledAt) }));
  return {
    writes: payouts.map(({ merchant, amountMinor }) => ({
      put: {
        tableName: plan.payoutsTable ?? examplePayoutsTable(),
        item: {
          payoutId: `${ctx.executionKey}#${merchant}`,
          jobId: ctx.jobId,
          scheduledAt: ctx.scheduledAt.toISOString(),
          merchant,
          amountMinor,
          currency: 'INR',
          chunk: n,
          fence: ctx.fence,
          worker: ctx.worker,
        },
      },
    })),
    outbox:
      plan.bankUrl === undefined
        ? []
        : payouts.map(({ merchant, amountMinor }) => ({
            key: merchant,
            url: `${plan.bankUrl}/wires`,
            body: JSON.stringify({ merchant, amountMinor, currency: 'INR', reference: `${ctx.executionKey}#${merchant}` }),
          })),
  };
}

export const merchantSettlement = defineJob('merchant-settlement', async (ctx) => {
  const plan = settlementPlan(ctx.payload);
  // Chunks in order; commitChunk skips (without running the work) those an earlier claim committed, after checking
  // that each was committed from the same merchants.
  for (let n = 0; n < plan.chunks; n++) {
    await ctx.commitChunk(
      n,
      async () => {
        if (plan.chunkWorkMs > 0) await realSleep(plan.chunkWorkMs, ctx.signal);
        return settlementChunk(ctx, plan, n);
      },
      { input: chunkMerchants(plan, n) },
    );
  }
  await ctx.commit([
    {
      put: {
        tableName: plan.payoutsTable ?? examplePayoutsTable(),
        item: {
          payoutId: ctx.executionKey,
          jobId: ctx.jobId,
          scheduledAt: ctx.scheduledAt.toISOString(),
          merchants: plan.merchants,
          chunks: plan.chunks,
          currency: 'INR',
          fence: ctx.fence,
          worker: ctx.worker,
        },
      },
    },
  ]);
});
