/**
 * The ChunkStore port in memory: commit-chunk.ts's transaction with the same
 * conditions (the claim holds by `mayFinalize`'s rule; one record per chunk
 * and per outbound request) and the same effect, all or nothing.
 */
import {
  chunkItemCount,
  chunkKey,
  MAX_ITEMS_PER_CHUNK,
  newOutboxItem,
  type ChunkCommitOutcome,
  type ChunkCommitRequest,
  type ChunkRecord,
  type ChunkStore,
} from '../core/chunks.ts';
import { BusinessConditionFailedError, FencedOutError, TooManyWritesError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import type { SliceKey } from '../core/slice.ts';
import { mayFinalize } from '../core/slice-transitions.ts';
import { planBusinessWrites } from './memory-business-writes.ts';
import { sliceId, type MemoryTables } from './memory-tables.ts';

export class InMemoryChunkStore implements ChunkStore {
  constructor(private readonly tables: MemoryTables) {}

  /** COMMIT CHUNK: the claim holds, the chunk's first record, every request key unused; all or nothing. */
  async commitChunk(request: ChunkCommitRequest): Promise<ChunkCommitOutcome> {
    const id = executionKey(request.key.jobId, request.key.scheduledAt);
    const name = chunkKey(id, request.chunk);
    const count = chunkItemCount(request);
    if (count > MAX_ITEMS_PER_CHUNK) throw new TooManyWritesError(name, count, MAX_ITEMS_PER_CHUNK);
    const applyWrites = planBusinessWrites(this.tables, name, request.writes);
    if (!mayFinalize(this.tables.slices.get(sliceId(request.key)), request.fence, request.owner))
      throw new FencedOutError(name, request.fence);
    const existing = this.tables.chunks.get(name);
    if (existing !== undefined)
      return existing.fence === request.fence && existing.owner === request.owner ? 'committed' : 'already-committed';
    const outbox = request.outbox.map((outbound) => newOutboxItem(id, request.chunk, request.fence, request.now, outbound));
    const taken = outbox.findIndex((item) => this.tables.outbox.has(item.idempotencyKey));
    if (taken >= 0) throw new BusinessConditionFailedError(name, request.writes.length + taken);
    this.tables.chunks.set(name, {
      executionKey: id,
      chunk: request.chunk,
      fence: request.fence,
      owner: request.owner,
      committedAt: request.now,
      items: count,
      ...(request.inputDigest !== undefined && { inputDigest: request.inputDigest }),
    });
    applyWrites();
    for (const item of outbox) this.tables.outbox.set(item.idempotencyKey, item);
    return 'committed';
  }

  async committedChunks(key: SliceKey): Promise<ChunkRecord[]> {
    const id = executionKey(key.jobId, key.scheduledAt);
    return [...this.tables.chunks.values()]
      .filter((record) => record.executionKey === id)
      .map((record) => structuredClone(record))
      .sort((a, b) => a.chunk - b.chunk);
  }
}
