/**
 * The drill's schedule set and handlers. Every commit writes a business row
 * keyed by execution key, fence and worker, with no condition of its own, so
 * a double commit would show up as two rows for one execution key: the drill
 * checks the business effect, not only the ledger.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { TableDefinition } from '../../lib/aws/schema.ts';
import { defineJob, type JobHandler } from '../../lib/engine/define-job.ts';
import { realSleep } from '../../lib/core/clock.ts';
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
      if (ms > 0) await realSleep(ms, ctx.signal);
      await ctx.commit([
        {
          put: {
            tableName: effectsTableName(prefix),
            item: {
              effectId: `${ctx.executionKey}#${ctx.fence}#${ctx.worker}`,
              executionKey: ctx.executionKey,
              fence: ctx.fence,
              worker: ctx.worker,
              // Which revision of the job's payload ran it (a lifecycle change puts a new one).
              rev: typeof ctx.payload.rev === 'number' ? ctx.payload.rev : 0,
            },
          },
        },
      ]);
    });
  return [
    effect('chaos-fast', () => random.int(0, 300)),
    effect('chaos-slow', () => (slowHandlers ? random.int(2500, 6000) : random.int(0, 300))),
  ];
}

const FAST_CRONS = ['*/5 * * * * *', '*/7 * * * * *', '*/10 * * * * *'];
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
/** `rate(...)` schedules (epoch-anchored, core/schedule-kinds.ts), every 15 s to a minute. */
const RATES = ['rate(15 seconds)', 'rate(30 seconds)', 'rate(45 seconds)', 'rate(1 minute)'];
/** The jittered jobs' window: each starts up to this late, at an offset of its own (core/jitter.ts). */
const JITTER = '10s';
const ZONES = ['UTC', 'Asia/Kolkata', 'America/New_York', 'Europe/Berlin'];
/**
 * The DST mode's schedules, in America/New_York: every 15 or 20 s (or every
 * minute) inside local hours 0 to 3, so a window that crosses 02:00 on
 * 2026-03-08 (hour 2 does not exist) or 01:00 on 2026-11-01 (hour 1 occurs
 * twice) has occurrences in the gap or the repeat, and on both sides of it.
 */
export const DST_ZONE = 'America/New_York';
const DST_CRONS = [
  '*/20 * 1 * * *',
  '*/20 * 2 * * *',
  '*/20 * 1-3 * * *',
  '10,40 * 1,2 * * *',
  '0 * 2 * * *',
  '* 1 * * *',
  '* 2 * * *',
  '*/15 * 0-2 * * *',
];

/**
 * `count` schedules: one in eight an every-few-seconds 6-field cron, one in
 * eight a `rate(...)`, the rest every 30 s to 2 min at a second of its own;
 * one in five runs a slow handler; one in six is jittered. (100 jobs and the policy jobs come to about 4 slices a
 * second: what one emulator core sustains with heartbeats, retries and injected duplicates on top. At 5.4 a second
 * (every 3 s and every 10 s schedules) a replica's restart left the emulator answering in 2-3 s for a few seconds, a
 * heartbeat's whole margin, and standbys took over holders that were still renewing: the emulator's limit, not the
 * engine's.)
 */
export function chaosJobs(count: number, random: SeededRandom, options: { dst?: boolean } = {}): JobSpecInput[] {
  return Array.from({ length: count }, (_, i) => {
    const dst = options.dst === true && i % 4 === 1;
    return {
      id: `chaos-${String(i).padStart(4, '0')}`,
      schedule: dst
        ? random.pick(DST_CRONS)
        : i % 8 === 0
          ? random.pick(FAST_CRONS)
          : i % 8 === 4
            ? random.pick(RATES)
            : random.pick(SLOW_CRONS)(random.int(0, 59)),
      timeZone: dst ? DST_ZONE : random.pick(ZONES),
      handler: i % 5 === 0 ? 'chaos-slow' : 'chaos-fast',
      ...(!dst && i % 6 === 3 && { jitter: JITTER }),
      payload: { rev: 0 },
      policies: { maxAttempts: 10, timeoutMs: 20_000, backoffBaseMs: 200, backoffMaxMs: 1000, catchUpWindowMs: 3_600_000 },
    };
  });
}

/** Is this one of the every-few-seconds schedules (where a change is most likely to meet a pending slice)? */
export function isFastSchedule(schedule: string): boolean {
  return FAST_CRONS.includes(schedule) || DST_CRONS.includes(schedule) || RATES.includes(schedule);
}

/** Is this one of the every-5-to-10-seconds crons (a scan meets such a job within seconds)? */
export function isEverySeconds(schedule: string): boolean {
  return FAST_CRONS.includes(schedule);
}

/** Another schedule of the same kind, for a lifecycle change of schedule. */
export function otherSchedule(schedule: string, random: SeededRandom): string {
  const pool = FAST_CRONS.includes(schedule)
    ? FAST_CRONS
    : DST_CRONS.includes(schedule)
      ? DST_CRONS
      : RATES.includes(schedule)
        ? RATES
        : undefined;
  if (pool) return random.pick(pool.filter((cron) => cron !== schedule));
  for (;;) {
    const next = random.pick(SLOW_CRONS)(random.int(0, 59));
    if (next !== schedule) return next;
  }
}
