/**
 * The handlers the bench's jobs run: one that does nothing (the happy path
 * costs only what cronfence itself does), one that holds its lease for
 * `payload.ms` (heartbeats), and one that commits one business write into
 * `payload.table` (the commit with a business write).
 */
import { defineJob } from '../../lib/engine/define-job.ts';

export const BENCH_NOOP = 'bench-noop';
export const BENCH_HOLD = 'bench-hold';
export const BENCH_WRITE = 'bench-write';

export const benchNoop = defineJob(BENCH_NOOP, async (ctx) => {
  ctx.signal.throwIfAborted();
});

export const benchHold = defineJob(BENCH_HOLD, async (ctx) => {
  const ms = Number(ctx.payload.ms ?? 1000);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
  });
});

export const benchWrite = defineJob(BENCH_WRITE, async (ctx) => {
  await ctx.commit([{ put: { tableName: String(ctx.payload.table), item: { id: ctx.executionKey, fence: ctx.fence } } }]);
});

export const BENCH_HANDLERS = [benchNoop, benchHold, benchWrite];
