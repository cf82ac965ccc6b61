/**
 * The chaos replica's chunk reports, read at its ports (decoratePorts), so the
 * settlement drill can count redone, skipped and refused chunks:
 *
 * - each chunk commit's outcome from the chunk store: committed, already
 *   committed by another claim, or refused by the fence (a zombie's late
 *   chunk, after a standby claimed the slice; the refusal is the store's);
 * - each chunk an attempt finds in its checkpoint (`committedChunks`, read
 *   once per attempt before its first chunk): the engine skips those without
 *   sending them, `ctx.commitChunk` answering 'already-committed'.
 *
 * The checkpoint read names no fence; the attempt's is the fence this replica
 * last won the slice with, which the slice store wrapper records.
 */
import type { ChunkStore } from '../../lib/core/chunks.ts';
import { FencedOutError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { SliceStore } from '../../lib/core/ports.ts';
import type { SliceKey } from '../../lib/core/slice.ts';

export interface ReportedChunk {
  readonly executionKey: string;
  /** The fence of the attempt. */
  readonly fence: number;
  readonly chunk: number;
  readonly outcome: 'committed' | 'already-committed' | 'refused';
}

export interface ChunkReportingPorts {
  readonly slices: SliceStore;
  readonly chunks: ChunkStore;
}

export function reportingChunks(ports: ChunkReportingPorts, onChunk: (chunk: ReportedChunk) => void): ChunkReportingPorts {
  const { slices, chunks } = ports;
  const claimedFence = new Map<string, number>();
  const keyOf = (key: SliceKey): string => executionKey(key.jobId, key.scheduledAt);
  return {
    slices: Object.assign(Object.create(slices) as SliceStore, {
      async claim(...args: Parameters<SliceStore['claim']>) {
        const outcome = await slices.claim(...args);
        if (outcome.won) claimedFence.set(keyOf(outcome.slice), outcome.slice.fence);
        return outcome;
      },
    }),
    chunks: {
      async committedChunks(key) {
        const records = await chunks.committedChunks(key);
        const fence = claimedFence.get(keyOf(key));
        if (fence !== undefined)
          for (const record of records) onChunk({ executionKey: keyOf(key), fence, chunk: record.chunk, outcome: 'already-committed' });
        return records;
      },
      async commitChunk(request) {
        const reported = { executionKey: keyOf(request.key), fence: request.fence, chunk: request.chunk };
        try {
          const outcome = await chunks.commitChunk(request);
          onChunk({ ...reported, outcome });
          return outcome;
        } catch (error) {
          if (error instanceof FencedOutError) onChunk({ ...reported, outcome: 'refused' });
          throw error;
        }
      },
    },
  };
}
