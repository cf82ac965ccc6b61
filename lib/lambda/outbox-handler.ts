/**
 * The outbox dispatcher as a Lambda handler, for an EventBridge schedule
 * (`rate(1 minute)`): passes over every outbox shard until nothing is due or
 * the time budget is spent, then returns; the next invocation carries on.
 * Two invocations at once are safe: each request is taken by one of them
 * (outbox-store.ts, TAKE). The CronScheduler construct runs it every minute
 * (lib/cdk/outbox-dispatcher.ts, functions/outbox.ts).
 */
import { OUTBOX_SHARDS } from '../core/chunks.ts';
import { OutboxDispatcher, type DispatchPass, type OutboxDispatcherDeps } from '../engine/outbox-dispatcher.ts';
import type { HandlerLog } from './handlers.ts';
import type { Runtime } from './wiring.ts';

export interface OutboxHandlerOptions extends Partial<Omit<OutboxDispatcherDeps, 'store' | 'clock'>> {
  /** How long one invocation dispatches. @default 50000 (under a 60 s function timeout) */
  readonly budgetMs?: number;
  /** Requests read per pass. @default 100 */
  readonly pageSize?: number;
}

export function createOutboxHandler(runtime: Runtime, log: HandlerLog, options: OutboxHandlerOptions = {}): () => Promise<DispatchPass> {
  const dispatcher = new OutboxDispatcher({
    store: runtime.outbox,
    clock: runtime.clock,
    deadLetters: runtime.deadLetters,
    onError: (error, context) => log.error('outbox dispatcher', { context, error: String(error) }),
    ...options,
  });
  const budgetMs = options.budgetMs ?? 50_000;
  const pageSize = options.pageSize ?? 100;
  return async () => {
    const deadline = runtime.clock.now() + budgetMs;
    const total = { delivered: 0, retried: 0, dead: 0 };
    let idleShards = 0;
    for (let shard = 0; idleShards < OUTBOX_SHARDS && runtime.clock.now() < deadline; shard = (shard + 1) % OUTBOX_SHARDS) {
      const pass = await dispatcher.dispatchDue(pageSize, shard);
      total.delivered += pass.delivered;
      total.retried += pass.retried;
      total.dead += pass.dead;
      idleShards = pass.delivered + pass.retried + pass.dead === 0 ? idleShards + 1 : 0;
    }
    log.info('outbox dispatched', total);
    return total;
  };
}
