/**
 * TEST ONLY: a chunk store without the fence check, to show what the fence
 * is for. It sends commit-chunk.ts's transaction without item [0] (the
 * ConditionCheck on the slice), so a zombie's late chunk lands. Nothing in
 * the product imports it.
 */
import { TransactWriteItemsCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { toTransactItem } from '../../lib/aws/dynamo/business-writes.ts';
import { chunkRecordItem, outboxItem } from '../../lib/aws/dynamo/chunk-items.ts';
import { chunkItemCount, newOutboxItem, type ChunkCommitOutcome, type ChunkCommitRequest, type ChunkStore } from '../../lib/core/chunks.ts';
import { executionKey } from '../../lib/core/execution-key.ts';

export function unfencedChunkStore(store: ChunkStore, dynamo: DynamoDBClient, chunksTable: string): ChunkStore {
  return {
    committedChunks: (key) => store.committedChunks(key),
    async commitChunk(request: ChunkCommitRequest): Promise<ChunkCommitOutcome> {
      const id = executionKey(request.key.jobId, request.key.scheduledAt);
      const record = {
        executionKey: id,
        chunk: request.chunk,
        fence: request.fence,
        owner: request.owner,
        committedAt: request.now,
        items: chunkItemCount(request),
      };
      await dynamo.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: { TableName: chunksTable, Item: chunkRecordItem(record, 0), ConditionExpression: 'attribute_not_exists(executionKey)' },
            },
            ...request.writes.map(toTransactItem),
            ...request.outbox.map((outbound) => ({
              Put: { TableName: chunksTable, Item: outboxItem(newOutboxItem(id, request.chunk, request.fence, request.now, outbound), 0) },
            })),
          ],
        }),
      );
      return 'committed';
    },
  };
}
