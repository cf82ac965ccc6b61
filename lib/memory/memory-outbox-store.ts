/**
 * The OutboxStore port in memory: outbox-store.ts's take and record with the
 * same conditions (PENDING with the dueAt read; still the delivery taken).
 */
import { outboxShardOf, type DeliveryResult, type OutboxItem, type OutboxStore } from '../core/chunks.ts';
import type { MemoryTables } from './memory-tables.ts';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class InMemoryOutboxStore implements OutboxStore {
  constructor(private readonly tables: MemoryTables) {}

  async findDue(shard: number, now: number, limit: number): Promise<OutboxItem[]> {
    return [...this.tables.outbox.values()]
      .filter((item) => item.status === 'PENDING' && (item.dueAt ?? 0) <= now && outboxShardOf(item.executionKey) === shard)
      .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0))
      .slice(0, limit)
      .map((item) => structuredClone(item));
  }

  /** TAKE: PENDING with the dueAt read; dueAt → until, deliveries + 1. */
  async take(item: OutboxItem, _now: number, until: number): Promise<OutboxItem | undefined> {
    const stored = this.tables.outbox.get(item.idempotencyKey);
    if (stored === undefined || stored.status !== 'PENDING' || stored.dueAt !== item.dueAt) return undefined;
    const taken = { ...stored, dueAt: until, deliveries: stored.deliveries + 1 };
    this.tables.outbox.set(item.idempotencyKey, taken);
    return structuredClone(taken);
  }

  /** RECORD: still PENDING with the deliveries taken; a lost race records nothing. */
  async record(item: OutboxItem, result: DeliveryResult): Promise<void> {
    const stored = this.tables.outbox.get(item.idempotencyKey);
    if (stored === undefined || stored.status !== 'PENDING' || stored.deliveries !== item.deliveries) return;
    const next: Mutable<OutboxItem> = { ...stored };
    if (result.statusCode !== undefined) next.lastStatusCode = result.statusCode;
    if (result.kind === 'delivered') {
      next.status = 'DELIVERED';
      next.deliveredAt = result.now;
      delete next.dueAt;
    } else if (result.kind === 'retry') {
      next.lastError = result.error.slice(0, 2000);
      next.dueAt = result.dueAt;
    } else {
      next.status = 'DEAD';
      next.lastError = result.error.slice(0, 2000);
      delete next.dueAt;
    }
    this.tables.outbox.set(item.idempotencyKey, next);
  }

  async list(executionKey: string): Promise<OutboxItem[]> {
    return [...this.tables.outbox.values()].filter((item) => item.executionKey === executionKey).map((item) => structuredClone(item));
  }
}
