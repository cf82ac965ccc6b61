/**
 * The simulation's handlers: the drill's two (a fast one and one that outlives
 * several heartbeats), waiting on the worker process's own clock, so a pause
 * of the process pauses them too. Each commits one business row keyed by
 * execution key, fence and worker, with no condition: a double commit shows
 * as two rows for one execution key.
 */
import { defineJob, type JobHandler } from '../../lib/engine/define-job.ts';
import type { Clock } from '../../lib/core/clock.ts';
import type { SeededRandom } from '../chaos/random.ts';

export const SIM_EFFECTS_TABLE = 'sim-effects';

export function simHandlers(clock: Clock, random: SeededRandom): JobHandler[] {
  const effect = (name: string, pauseMs: () => number) =>
    defineJob(name, async (ctx) => {
      const ms = pauseMs();
      if (ms > 0) await clock.sleep(ms, ctx.signal);
      await ctx.commit([
        {
          put: {
            tableName: SIM_EFFECTS_TABLE,
            item: {
              effectId: `${ctx.executionKey}#${ctx.fence}#${ctx.worker}`,
              executionKey: ctx.executionKey,
              fence: ctx.fence,
              worker: ctx.worker,
            },
          },
        },
      ]);
    });
  return [effect('chaos-fast', () => random.int(0, 300)), effect('chaos-slow', () => random.int(2500, 6000))];
}
