/**
 * The handlers the bench's jobs run: one that does nothing (the happy path
 * costs only what cronfence itself does) and one that holds its lease for
 * `payload.ms` (heartbeats).
 */
import { defineJob } from '../engine/define-job.ts';

export const BENCH_NOOP = 'bench-noop';
export const BENCH_HOLD = 'bench-hold';

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

export const BENCH_HANDLERS = [benchNoop, benchHold];
