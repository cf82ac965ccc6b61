/**
 * The ChunkStore port over DynamoDB (lib/core/chunks.ts): the chunk commit
 * (commit-chunk.ts) and the checkpoint read, one Query of the execution's
 * partition of the chunks table.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  chunkItemCount,
  chunkSortKey,
  MAX_ITEMS_PER_CHUNK,
  type ChunkCommitOutcome,
  type ChunkCommitRequest,
  type ChunkRecord,
  type ChunkStore,
} from '../../core/chunks.ts';
import { TooManyWritesError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { SliceKey } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { toChunkRecord } from './chunk-items.ts';
import { commitChunk } from './commit-chunk.ts';
import { onTable } from './errors.ts';
import { queryAll } from './read-pages.ts';

export class DynamoChunkStore implements ChunkStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'slicesTable' | 'chunksTable' | 'sliceRetentionMs'>,
  ) {}

  async commitChunk(request: ChunkCommitRequest): Promise<ChunkCommitOutcome> {
    const key = executionKey(request.key.jobId, request.key.scheduledAt);
    const count = chunkItemCount(request);
    if (count > MAX_ITEMS_PER_CHUNK) throw new TooManyWritesError(`${key}#chunk-${request.chunk}`, count, MAX_ITEMS_PER_CHUNK);
    const expiresAtSeconds = Math.floor((request.now + this.config.sliceRetentionMs) / 1000);
    return commitChunk(this.dynamo, this.config, request, expiresAtSeconds, () => this.readChunk(key, request.chunk));
  }

  async committedChunks(slice: SliceKey): Promise<ChunkRecord[]> {
    const items = await queryAll(this.dynamo, {
      TableName: this.config.chunksTable,
      KeyConditionExpression: 'executionKey = :key AND begins_with(#item, :chunk)',
      ExpressionAttributeNames: { '#item': 'item' },
      ExpressionAttributeValues: { ':key': { S: executionKey(slice.jobId, slice.scheduledAt) }, ':chunk': { S: 'chunk#' } },
      ConsistentRead: true,
    });
    return items.map(toChunkRecord).sort((a, b) => a.chunk - b.chunk);
  }

  private async readChunk(key: string, chunk: number): Promise<ChunkRecord | undefined> {
    const result = await onTable(this.config.chunksTable, () =>
      this.dynamo.send(
        new GetItemCommand({
          TableName: this.config.chunksTable,
          Key: { executionKey: { S: key }, item: { S: chunkSortKey(chunk) } },
          ConsistentRead: true,
        }),
      ),
    );
    return result.Item ? toChunkRecord(result.Item) : undefined;
  }
}
