/**
 * `cronfence dev`'s outbox: a dispatcher in the dev process delivering what
 * chunked commits recorded (as the construct's outbox Lambda does) to the
 * URLs the jobs gave them (the examples': a mock bank, examples/jobs/dev-jobs.ts).
 */
import { systemClock } from '../core/clock.ts';
import { OutboxDispatcher } from '../engine/outbox-dispatcher.ts';
import type { Runtime } from '../lambda/wiring.ts';

export interface DevOutbox {
  /** Stops the dispatcher; a line on what was delivered. */
  stop(): Promise<string>;
}

export function startDevOutbox(runtime: Runtime): DevOutbox {
  const stopping = new AbortController();
  const counts = { delivered: 0, retried: 0, dead: 0 };
  const dispatcher = new OutboxDispatcher({
    store: runtime.outbox,
    clock: systemClock,
    deadLetters: runtime.deadLetters,
    // Two lanes: the emulator serves DynamoDB one request at a time, and the workers need it too.
    concurrency: 2,
    onResult: (_item, result) =>
      void (counts[result.kind === 'delivered' ? 'delivered' : result.kind === 'retry' ? 'retried' : 'dead'] += 1),
  });
  const running = dispatcher.run(stopping.signal, 500, 100);
  return {
    async stop() {
      stopping.abort();
      await running;
      return `outbox: ${counts.delivered} requests delivered, ${counts.retried} retried, ${counts.dead} dead-lettered`;
    },
  };
}
