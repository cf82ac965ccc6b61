/**
 * `cronfence dev`'s outbox: a dispatcher in the dev process delivering what
 * chunked commits recorded (as the construct's outbox Lambda does), and, for
 * the example jobs, a local mock bank the example settlement wires its 1,200
 * payouts to (a jobs module's requests go to the URLs it gives them).
 */
import { systemClock } from '../core/clock.ts';
import { OutboxDispatcher } from '../engine/outbox-dispatcher.ts';
import type { Runtime } from '../lambda/wiring.ts';
import { MockBank } from './mock-bank.ts';

export interface DevOutbox {
  /** The example settlement's bank (example jobs only). */
  readonly bank?: MockBank;
  /** Stops the dispatcher (and the bank); a line on what was delivered. */
  stop(): Promise<string>;
}

export async function startDevOutbox(runtime: Runtime, options: { readonly withBank: boolean }): Promise<DevOutbox> {
  const bank = options.withBank ? await new MockBank().start() : undefined;
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
    bank,
    async stop() {
      stopping.abort();
      await running;
      await bank?.close();
      const line = `outbox: ${counts.delivered} requests delivered, ${counts.retried} retried, ${counts.dead} dead-lettered`;
      return bank ? `${line}; mock bank: ${bank.booked.size} wires accepted, ${bank.replays} repeats answered by idempotency key` : line;
    },
  };
}
