/**
 * Delivers the outbound requests chunks committed (lib/core/chunks.ts), at
 * least once each, with `Idempotency-Key: <executionKey>#<request key>` and
 * the fence of the claim that committed it (`X-Cronfence-Fence`).
 *
 *   PENDING ──take──▶ (hidden for takeMs) ──2xx──▶ DELIVERED
 *      ▲                     │ network error, 408, 429, 5xx
 *      └──── backoff ────────┤
 *                            └── permanent 4xx, or maxDeliveries reached ──▶ DEAD (+ a dead-letter record)
 *
 * Exactly once ends here: a request is sent again whenever its delivery was
 * not recorded (a dispatcher that dies after the receiver answered, a reply
 * lost on the way), so the receiver must honour the idempotency key.
 */
import { retryDelayMs, type BackoffPolicy } from '../core/backoff.ts';
import { DEFAULT_MAX_DELIVERIES, OUTBOX_SHARDS, type DeliveryResult, type OutboxItem, type OutboxStore } from '../core/chunks.ts';
import type { Clock } from '../core/clock.ts';
import { parseExecutionKey } from '../core/execution-key.ts';
import type { DeadLetterSink } from '../core/ports.ts';

/** What the dispatcher asks of the network: send one request, say its status code. */
export type DeliverRequest = (request: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}) => Promise<{ status: number }>;

export interface OutboxDispatcherDeps {
  readonly store: OutboxStore;
  readonly clock: Clock;
  /** @default fetch */
  readonly deliver?: DeliverRequest;
  /** Deliveries before a request is dead-lettered. @default 8 */
  readonly maxDeliveries?: number;
  /** @default 200 ms doubling to 30 s, full jitter */
  readonly backoff?: BackoffPolicy;
  /** How long a taken request stays hidden from other dispatchers; also the request timeout. @default 10000 */
  readonly takeMs?: number;
  /** Requests delivered at once. @default 16 */
  readonly concurrency?: number;
  readonly deadLetters?: DeadLetterSink;
  readonly random?: () => number;
  readonly onError?: (error: unknown, context: string) => void;
  readonly onResult?: (item: OutboxItem, result: DeliveryResult) => void;
}

export interface DispatchPass {
  readonly delivered: number;
  readonly retried: number;
  readonly dead: number;
}

const fetchDeliver: DeliverRequest = async ({ url, method, headers, body, signal }) => {
  const response = await fetch(url, { method, headers, body, signal });
  await response.arrayBuffer().catch(() => undefined);
  return { status: response.status };
};

export class OutboxDispatcher {
  private readonly deliver: DeliverRequest;
  private readonly takeMs: number;
  private shard = 0;

  constructor(private readonly deps: OutboxDispatcherDeps) {
    this.deliver = deps.deliver ?? fetchDeliver;
    this.takeMs = deps.takeMs ?? 10_000;
  }

  /** One pass over what is due now in `shard` (each pass of `run` reads the next shard). */
  async dispatchDue(limit = 100, shard = this.shard): Promise<DispatchPass> {
    const queue = await this.deps.store.findDue(shard, this.deps.clock.now(), limit);
    const counts = { delivered: 0, retried: 0, dead: 0 };
    const lanes = Array.from({ length: Math.min(this.deps.concurrency ?? 16, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        // One request's store error (a timeout) leaves it PENDING for a later pass; the rest go on.
        const result = await this.deliverOne(item).catch((error: unknown) => {
          // Not the callback's return value: a logger that returns something must not count as a result.
          this.deps.onError?.(error, `delivering ${item.idempotencyKey}`);
          return undefined;
        });
        if (result) counts[result.kind === 'delivered' ? 'delivered' : result.kind === 'retry' ? 'retried' : 'dead']++;
      }
    });
    await Promise.all(lanes);
    return counts;
  }

  /** Passes of up to `limit` until `signal` aborts, resting `idleMs` after any pass that found less than a full page. */
  async run(signal: AbortSignal, idleMs = 250, limit = 100): Promise<void> {
    while (!signal.aborted) {
      let pass: DispatchPass = { delivered: 0, retried: 0, dead: 0 };
      try {
        pass = await this.dispatchDue(limit);
      } catch (error) {
        this.deps.onError?.(error, 'outbox pass');
      }
      // A full page means more may be waiting in this shard: read it again before moving on.
      if (pass.delivered + pass.retried + pass.dead < limit) {
        this.shard = (this.shard + 1) % OUTBOX_SHARDS;
        if (this.shard === 0) await this.deps.clock.sleep(idleMs, signal).catch(() => {});
      }
    }
  }

  /** Takes, sends and records one request; undefined when another dispatcher took it first. */
  private async deliverOne(seen: OutboxItem): Promise<DeliveryResult | undefined> {
    const { store, clock } = this.deps;
    const item = await store.take(seen, clock.now(), clock.now() + this.takeMs);
    if (item === undefined) return undefined;
    const result = await this.attempt(item);
    await store.record(item, result);
    if (result.kind === 'dead') await this.deadLetter(item, result.error);
    this.deps.onResult?.(item, result);
    return result;
  }

  private async attempt(item: OutboxItem): Promise<DeliveryResult> {
    const headers = {
      'content-type': 'application/json',
      ...item.headers,
      'idempotency-key': item.idempotencyKey,
      'x-cronfence-fence': String(item.fence),
      'x-cronfence-execution-key': item.executionKey,
    };
    let status: number | undefined;
    let error: string;
    try {
      ({ status } = await this.deliver({
        url: item.url,
        method: item.method,
        headers,
        body: item.body,
        signal: this.deps.clock.timeout(this.takeMs),
      }));
      if (status >= 200 && status < 300) return { kind: 'delivered', now: this.deps.clock.now(), statusCode: status };
      error = `HTTP ${status}`;
    } catch (failure) {
      error = failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure);
    }
    const now = this.deps.clock.now();
    const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
    if (permanent || item.deliveries >= (this.deps.maxDeliveries ?? DEFAULT_MAX_DELIVERIES))
      return { kind: 'dead', now, error, statusCode: status };
    const delay = retryDelayMs(item.deliveries, this.deps.backoff ?? { baseMs: 200, maxMs: 30_000 }, this.deps.random);
    return { kind: 'retry', now, error, statusCode: status, dueAt: now + delay };
  }

  private async deadLetter(item: OutboxItem, error: string): Promise<void> {
    try {
      const slice = parseExecutionKey(item.executionKey);
      await this.deps.deadLetters?.send({
        executionKey: item.idempotencyKey,
        jobId: slice?.jobId ?? item.executionKey,
        scheduledAt: slice?.scheduledAt ?? 0,
        attempts: item.deliveries,
        error: `outbound request ${item.method} ${item.url} dead after ${item.deliveries} deliveries: ${error}`,
        at: this.deps.clock.now(),
      });
    } catch (failure) {
      this.deps.onError?.(failure, 'dead-lettering an outbound request');
    }
  }
}
