/**
 * Chunked commits and the outbox: the pure rules and the ports.
 *
 * A slice whose effect is more writes than one transaction holds commits in
 * chunks. Chunk n of execution K is one DynamoDB transaction:
 *
 *   [0] ConditionCheck slices[K]   fence = mine AND owner = me AND status = RUNNING
 *   [1] Put chunks[K, chunk#n]     attribute_not_exists — one record per chunk, ever
 *   [2..] the chunk's business writes, then one Put per outbound request
 *         (chunks[K, outbox#<request key>], attribute_not_exists)
 *
 * The chunk record is the checkpoint: a standby that claims the slice reads
 * the committed set (after its claim bumped the fence, so no older claim can
 * add to it) and skips those chunks. The slice becomes SUCCEEDED only through
 * the ordinary final commit (`ctx.commit`), sent once every chunk is settled.
 */
import { createHash } from 'node:crypto';
import type { BusinessWrite } from './ports.ts';
import { shardOf } from './shard.ts';
import type { SliceKey } from './slice.ts';

/** A transaction holds 100 items; the fence check and the chunk record take two. */
export const MAX_ITEMS_PER_CHUNK = 98;
/** Chunk numbers are whole numbers below this (the sort key pads them to six digits). */
export const MAX_CHUNKS = 1_000_000;
/** Deliveries of one outbound request before it is dead-lettered. */
export const DEFAULT_MAX_DELIVERIES = 8;
/** Partitions of the pending-outbox index, so none is hot; a dispatcher pass reads one. */
export const OUTBOX_SHARDS = 4;

export function outboxShardOf(executionKey: string): number {
  return shardOf(executionKey, OUTBOX_SHARDS);
}

/** The deterministic name of chunk `n`: `merchant-settlement:2026-09-04T00:30:00Z#chunk-12`. */
export function chunkKey(executionKey: string, n: number): string {
  return `${executionKey}#chunk-${n}`;
}

/** The key an outbound request is delivered with: `<executionKey>#<request key>`. */
export function idempotencyKey(executionKey: string, requestKey: string): string {
  return `${executionKey}#${requestKey}`;
}

/** Sort keys inside one execution's partition of the chunks table. */
export function chunkSortKey(n: number): string {
  return `chunk#${String(n).padStart(6, '0')}`;
}

export function outboxSortKey(requestKey: string): string {
  return `outbox#${requestKey}`;
}

/** An outbound HTTP request, recorded with a chunk and delivered by the outbox dispatcher. */
export interface OutboundRequest {
  /** Unique within the execution and the same on every run of it (a merchant id, say): it names the idempotency key. */
  readonly key: string;
  readonly url: string;
  /** @default 'POST' */
  readonly method?: 'POST' | 'PUT';
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as it is; JSON.stringify it yourself. */
  readonly body: string;
}

/** What one chunk commits. */
export interface ChunkWork {
  readonly writes?: readonly BusinessWrite[];
  readonly outbox?: readonly OutboundRequest[];
}

/**
 * What `ctx.commitChunk` may be told besides the work. `input`: what the chunk
 * is made of (the ids of its rows, say: the 40 merchant ids of settlement chunk
 * 12), any JSON value. Its digest is kept on the chunk record, and every later
 * attempt that names a committed chunk's input must name the same one: a list
 * that changed between attempts in a way the committed chunks cannot account
 * for (a merchant removed before chunk 12 moves every later merchant one place,
 * so one of them falls between a committed chunk and the next) fails the slot
 * DEAD with the reason, instead of succeeding with a row missing.
 */
export interface ChunkOptions {
  readonly input?: unknown;
}

/** The digest of a chunk's input kept on its record: SHA-256 of its JSON with object keys sorted. */
export function chunkInputDigest(input: unknown): string {
  const json = JSON.stringify(input, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );
  return createHash('sha256')
    .update(json ?? 'undefined')
    .digest('hex')
    .slice(0, 32);
}

/**
 * Why this attempt's chunks disagree with what earlier attempts committed, or
 * undefined: a committed chunk this attempt names with another input, or, at
 * the final commit, a committed chunk with an input that this attempt (which
 * named inputs) did not name at all (its plan has fewer chunks now).
 */
export function chunkInputChange(committed: ChunkRecord | undefined, digest: string | undefined): string | undefined {
  if (committed?.inputDigest === undefined || digest === undefined || committed.inputDigest === digest) return undefined;
  return `its input changed between attempts: committed by fence ${committed.fence} from input ${committed.inputDigest}, named now with input ${digest}; the committed chunks cannot account for the new list (a row would be missed or paid twice)`;
}

/** `'already-committed'`: an earlier claim committed this chunk; nothing was written and the work was not run. */
export type ChunkCommitOutcome = 'committed' | 'already-committed';

export interface ChunkRecord {
  readonly executionKey: string;
  readonly chunk: number;
  readonly fence: number;
  readonly owner: string;
  readonly committedAt: number;
  /** Business writes + outbound requests the chunk committed. */
  readonly items: number;
  /** `chunkInputDigest` of the input the chunk was committed from, when the handler named one. */
  readonly inputDigest?: string;
}

export interface ChunkCommitRequest {
  readonly key: SliceKey;
  readonly fence: number;
  readonly owner: string;
  readonly now: number;
  readonly chunk: number;
  readonly writes: readonly BusinessWrite[];
  readonly outbox: readonly OutboundRequest[];
  /** Kept on the chunk record (`ChunkOptions.input`). */
  readonly inputDigest?: string;
}

export interface ChunkStore {
  /**
   * One transaction: the fence check, the chunk record, the writes and the
   * outbox items. A record with my fence and owner already there is my own
   * earlier try (its reply lost): `'committed'`. One with another claim's
   * fence: `'already-committed'`, nothing written.
   * @throws {FencedOutError} the slice has a newer claim or is final.
   * @throws {BusinessConditionFailedError} a write's condition, or an outbound request key already used by another chunk.
   * @throws {TooManyWritesError}
   */
  commitChunk(request: ChunkCommitRequest): Promise<ChunkCommitOutcome>;
  /** The chunks committed for a slice, lowest first (a consistent read). */
  committedChunks(key: SliceKey): Promise<ChunkRecord[]>;
}

export type OutboxStatus = 'PENDING' | 'DELIVERED' | 'DEAD';

export interface OutboxItem {
  readonly executionKey: string;
  readonly requestKey: string;
  readonly idempotencyKey: string;
  readonly chunk: number;
  /** The fence of the claim that committed the request. */
  readonly fence: number;
  readonly url: string;
  readonly method: 'POST' | 'PUT';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly status: OutboxStatus;
  readonly deliveries: number;
  /** When a dispatcher may next take it (epoch ms); PENDING only. */
  readonly dueAt?: number;
  readonly createdAt: number;
  readonly deliveredAt?: number;
  readonly lastStatusCode?: number;
  readonly lastError?: string;
}

/** What a dispatcher records after one delivery attempt. */
export type DeliveryResult =
  | { readonly kind: 'delivered'; readonly now: number; readonly statusCode: number }
  | { readonly kind: 'retry'; readonly now: number; readonly error: string; readonly statusCode?: number; readonly dueAt: number }
  | { readonly kind: 'dead'; readonly now: number; readonly error: string; readonly statusCode?: number };

export interface OutboxStore {
  /** PENDING requests of one shard (0 to OUTBOX_SHARDS - 1) with dueAt ≤ now, earliest first. */
  findDue(shard: number, now: number, limit: number): Promise<OutboxItem[]>;
  /**
   * Takes `item` for one delivery: dueAt → `until` (so no other dispatcher
   * takes it meanwhile) and deliveries + 1, on condition that it is still
   * PENDING with the dueAt read. @returns the taken item, or undefined when another dispatcher took it first.
   */
  take(item: OutboxItem, now: number, until: number): Promise<OutboxItem | undefined>;
  /** Records the attempt's result, on condition the item is still the one taken (deliveries unchanged). */
  record(item: OutboxItem, result: DeliveryResult): Promise<void>;
  /** Every outbound request of an execution. */
  list(executionKey: string): Promise<OutboxItem[]>;
}

/** The outbox item a chunk commit writes for `request`. */
export function newOutboxItem(executionKey: string, chunk: number, fence: number, now: number, request: OutboundRequest): OutboxItem {
  return {
    executionKey,
    requestKey: request.key,
    idempotencyKey: idempotencyKey(executionKey, request.key),
    chunk,
    fence,
    url: request.url,
    method: request.method ?? 'POST',
    headers: { ...request.headers },
    body: request.body,
    status: 'PENDING',
    deliveries: 0,
    dueAt: now,
    createdAt: now,
  };
}

const REQUEST_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;

/** Why a chunk may not be sent as asked, or undefined when it may. */
export function chunkProblem(n: number, work: ChunkWork): string | undefined {
  if (!Number.isInteger(n) || n < 0 || n >= MAX_CHUNKS)
    return `chunk number must be a whole number from 0 to ${MAX_CHUNKS - 1}, not ${String(n)}`;
  const seen = new Set<string>();
  for (const request of work.outbox ?? []) {
    if (!REQUEST_KEY.test(request.key)) return `outbound request key ${JSON.stringify(request.key)} must match ${REQUEST_KEY.source}`;
    if (seen.has(request.key)) return `outbound request key ${JSON.stringify(request.key)} appears twice in chunk ${n}`;
    seen.add(request.key);
    if (!/^https?:\/\//.test(request.url))
      return `outbound request ${JSON.stringify(request.key)}: url must be http(s), not ${JSON.stringify(request.url)}`;
  }
  return undefined;
}

/** Items a chunk puts in its transaction beside the fence check and the chunk record. */
export function chunkItemCount(work: ChunkWork): number {
  return (work.writes?.length ?? 0) + (work.outbox?.length ?? 0);
}
