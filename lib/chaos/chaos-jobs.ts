/**
 * The drill's schedule set and handlers. Every commit writes a business row
 * keyed by execution key, fence and worker, with no condition of its own, so
 * a double commit would show up as two rows for one execution key: the drill
 * checks the business effect, not only the ledger.
 */
import type { JobSpecInput } from '../core/job-spec.ts';
import type { TableDefinition } from '../aws/schema.ts';
import { defineJob, type JobHandler } from '../engine/define-job.ts';
import { sleep } from '../core/clock.ts';
import type { SeededRandom } from './random.ts';

export const EFFECTS_TABLE: TableDefinition = {
  logicalName: 'chaos-effects',
  partitionKey: { name: 'effectId', type: 'S' },
  globalSecondaryIndexes: [],
};

export function effectsTableName(prefix: string): string {
  return `${prefix}-${EFFECTS_TABLE.logicalName}`;
}

/** Handlers for a chaos worker; `slow` outlives several heartbeats. */
export function chaosHandlers(prefix: string, random: SeededRandom, slowHandlers: boolean): JobHandler[] {
  const effect = (name: string, pauseMs: () => number) =>
    defineJob(name, async (ctx) => {
      const ms = pauseMs();
      if (ms > 0) await sleep(ms, ctx.signal);
      await ctx.commit([
        {
          put: {
            tableName: effectsTableName(prefix),
            item: { effectId: `${ctx.executionKey}#${ctx.fence}#${ctx.worker}`, executionKey: ctx.executionKey, fence: ctx.fence, worker: ctx.worker },
          },
        },
      ]);
    });
  return [effect('chaos-fast', () => random.int(0, 300)), effect('chaos-slow', () => (slowHandlers ? random.int(2500, 6000) : random.int(0, 300)))];
}

const FAST_CRONS = ['*/3 * * * * *', '*/5 * * * * *', '*/7 * * * * *'];
/**
 * Every 30 s, every minute, every 2 min, each at its own second. With them
 * all on :00 the drill would measure the emulator instead: its DynamoDB
 * serves one request at a time (about 100 a second here), so 60 slices due
 * in one second queue for seconds, and a takeover queued behind them reads
 * as a slow failover. The midnight burst is the benchmark's job.
 */
const SLOW_CRONS: ((second: number) => string)[] = [
  (s) => `${s % 30},${(s % 30) + 30} * * * * *`,
  (s) => `${s} * * * * *`,
  (s) => `${s} */2 * * * *`,
];
const ZONES = ['UTC', 'Asia/Kolkata', 'America/New_York', 'Europe/Berlin'];

/**
 * `count` schedules: one in eight an every-few-seconds 6-field cron, the rest
 * every 30 s to 2 min at a second of its own; one in five runs a slow
 * handler. (100 jobs come to about 4 slices a second: what one emulator core
 * sustains with heartbeats, retries and injected duplicates on top.)
 */
export function chaosJobs(count: number, random: SeededRandom): JobSpecInput[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `chaos-${String(i).padStart(4, '0')}`,
    schedule: i % 8 === 0 ? random.pick(FAST_CRONS) : random.pick(SLOW_CRONS)(random.int(0, 59)),
    timeZone: random.pick(ZONES),
    handler: i % 5 === 0 ? 'chaos-slow' : 'chaos-fast',
    policies: { maxAttempts: 10, timeoutMs: 20_000, backoffBaseMs: 200, backoffMaxMs: 1000, catchUpWindowMs: 3_600_000 },
  }));
}
