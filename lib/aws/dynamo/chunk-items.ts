/**
 * Translation between the chunks table's items and the core's chunk and
 * outbox types (lib/core/chunks.ts). No rules here: only names and shapes.
 */
import {
  chunkKey,
  chunkSortKey,
  outboxShardOf,
  outboxSortKey,
  type ChunkRecord,
  type OutboxItem,
  type OutboxStatus,
} from '../../core/chunks.ts';
import { fromItem, toItem, type Item } from './items.ts';

export function chunkRecordItem(record: ChunkRecord, expiresAtSeconds: number): Item {
  return toItem({
    executionKey: record.executionKey,
    item: chunkSortKey(record.chunk),
    chunkKey: chunkKey(record.executionKey, record.chunk),
    chunk: record.chunk,
    fence: record.fence,
    owner: record.owner,
    committedAt: record.committedAt,
    items: record.items,
    inputDigest: record.inputDigest,
    expiresAt: expiresAtSeconds,
  });
}

export function toChunkRecord(item: Item): ChunkRecord {
  const raw = fromItem(item);
  return {
    executionKey: raw.executionKey as string,
    chunk: raw.chunk as number,
    fence: raw.fence as number,
    owner: raw.owner as string,
    committedAt: raw.committedAt as number,
    items: raw.items as number,
    ...(typeof raw.inputDigest === 'string' && { inputDigest: raw.inputDigest }),
  };
}

export function outboxKeyItem(executionKey: string, requestKey: string): Item {
  return { executionKey: { S: executionKey }, item: { S: outboxSortKey(requestKey) } };
}

/** A PENDING item carries `outboxShard` + `dueAt`, its key in the sparse "outbox" index. */
export function outboxItem(item: OutboxItem, expiresAtSeconds: number): Item {
  return toItem({
    ...item,
    item: outboxSortKey(item.requestKey),
    ...(item.status === 'PENDING' && { outboxShard: outboxShardOf(item.executionKey) }),
    expiresAt: expiresAtSeconds,
  });
}

export function toOutboxItem(item: Item): OutboxItem {
  const raw = fromItem(item);
  return {
    executionKey: raw.executionKey as string,
    requestKey: raw.requestKey as string,
    idempotencyKey: raw.idempotencyKey as string,
    chunk: raw.chunk as number,
    fence: raw.fence as number,
    url: raw.url as string,
    method: raw.method as 'POST' | 'PUT',
    headers: (raw.headers as Record<string, string> | undefined) ?? {},
    body: raw.body as string,
    status: raw.status as OutboxStatus,
    deliveries: raw.deliveries as number,
    dueAt: raw.dueAt as number | undefined,
    createdAt: raw.createdAt as number,
    deliveredAt: raw.deliveredAt as number | undefined,
    lastStatusCode: raw.lastStatusCode as number | undefined,
    lastError: raw.lastError as string | undefined,
  };
}
