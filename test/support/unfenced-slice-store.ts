/**
 * TEST ONLY: a deliberately broken slice store, to prove the chaos drill
 * catches a broken engine. Renewals and commits lose their fence conditions,
 * so a zombie keeps renewing and its late commit lands. The drill's replicas get it from their own entry
 * module (unfenced-replica.ts); nothing in the product imports it.
 */
import { TransactWriteItemsCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { toTransactItem } from '../../lib/aws/dynamo/business-writes.ts';
import type { Claim, FencedClaim } from '../../lib/core/claim.ts';
import type { BusinessWrite, SliceStore } from '../../lib/core/ports.ts';
import type { SliceKey } from '../../lib/core/slice.ts';

/** `store` with fence-free renew and commit, written through the replica's own client to its own tables. */
export function unfencedSliceStore(
  store: SliceStore,
  { dynamo, config }: { dynamo: DynamoDBClient; config: { slicesTable: string } },
): SliceStore {
  const key = (slice: SliceKey) => marshall({ jobId: slice.jobId, scheduledAt: slice.scheduledAt });
  return Object.assign(Object.create(store) as SliceStore, {
    async renew({ key: slice }: FencedClaim, now: number, leaseMs: number): Promise<void> {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: config.slicesTable,
          Key: key(slice),
          UpdateExpression: 'SET leaseExpiresAt = :expires',
          ExpressionAttributeValues: marshall({ ':expires': now + leaseMs }),
        }),
      );
    },
    async commit({ key: slice, fence, owner }: Claim, now: number, writes: readonly BusinessWrite[]): Promise<void> {
      await dynamo.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName: config.slicesTable,
                Key: key(slice),
                UpdateExpression: 'SET #status = :done, finishedAt = :now, fence = :fence, #owner = :owner REMOVE sweepShard, sweepAt',
                ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
                ExpressionAttributeValues: marshall({ ':done': 'SUCCEEDED', ':now': now, ':fence': fence, ':owner': owner }),
              },
            },
            ...writes.map(toTransactItem),
          ],
        }),
      );
    },
  });
}
