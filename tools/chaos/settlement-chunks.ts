/**
 * The chaos replica's chunk store wrapper: reports each chunk commit the
 * fence refused (a zombie's late chunk, after a standby claimed the slice),
 * so the settlement drill can count them. The refusal itself is the store's.
 */
import type { ChunkStore } from '../../lib/core/chunks.ts';
import { FencedOutError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';

export interface RefusedChunk {
  readonly executionKey: string;
  readonly fence: number;
  readonly chunk: number;
}

export function reportingChunkStore(inner: ChunkStore, onRefused: (refused: RefusedChunk) => void): ChunkStore {
  return {
    committedChunks: (key) => inner.committedChunks(key),
    async commitChunk(request) {
      try {
        return await inner.commitChunk(request);
      } catch (error) {
        if (error instanceof FencedOutError)
          onRefused({ executionKey: executionKey(request.key.jobId, request.key.scheduledAt), fence: request.fence, chunk: request.chunk });
        throw error;
      }
    },
  };
}
