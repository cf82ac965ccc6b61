/**
 * COMMIT CHUNK — one chunk of a chunked slice, exactly once, under the fence.
 *
 * One TransactWriteItems:
 *   [0] ConditionCheck slices[jobId, scheduledAt]
 *       Condition: fence = mine AND owner = me AND status = RUNNING (`mayFinalize`'s rule:
 *                  the claim still holds and the slice is not final)
 *   [1] Put chunks[executionKey, chunk#n]
 *       Condition: attribute_not_exists(executionKey) — one record per chunk, ever
 *       Effect:    {chunkKey `<executionKey>#chunk-<n>`, fence, owner, committedAt, items}
 *   [2..] the chunk's business writes, then one Put per outbound request:
 *       chunks[executionKey, outbox#<key>], attribute_not_exists, PENDING in the "outbox" index
 * Outcome: 'committed'; or cancelled —
 *   - [0] failed → FencedOutError (a newer claim, or the slice is final);
 *   - [1] failed → the record is read: my fence and owner → my earlier try
 *     landed (lost reply) → 'committed'; another claim's → 'already-committed';
 *   - [2..] failed → BusinessConditionFailedError naming the item (an index
 *     past the writes is an outbound request key another chunk used);
 *   - busy → StoreBusyError at once (nothing written; the engine sends it
 *     again: lib/engine/send-again.ts);
 *   - anything else → CommitRejectedError.
 * Not cancelled: as finalize-slice.ts (StoreBusyError, CommitRejectedError, or
 * an unknown outcome thrown as it is, for the caller to send again).
 */
import { TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { chunkItemCount, newOutboxItem, type ChunkCommitOutcome, type ChunkCommitRequest, type ChunkRecord } from '../../core/chunks.ts';
import { BusinessConditionFailedError, CommitRejectedError, FencedOutError, StoreBusyError } from '../../core/errors.ts';
import { executionKey as keyOf } from '../../core/execution-key.ts';
import { SliceStatus } from '../../core/slice.ts';
import { toTransactItem } from './business-writes.ts';
import { chunkRecordItem, outboxItem } from './chunk-items.ts';
import { cancellationCodes, isBusyCancellation, isBusyRefusal, isClientRejection, onTables } from './errors.ts';
import { sliceKeyItem } from './items.ts';

export interface ChunkTables {
  readonly slicesTable: string;
  readonly chunksTable: string;
}

/** The claim still holds: my fence, me, RUNNING. */
const CLAIM_HOLDS = 'fence = :fence AND #owner = :owner AND #status = :running';
/** No record of this chunk (or outbound request) yet. */
const FIRST_RECORD = 'attribute_not_exists(executionKey)';

export async function commitChunk(
  dynamo: DynamoDBClient,
  tables: ChunkTables,
  request: ChunkCommitRequest,
  expiresAtSeconds: number,
  readRecord: () => Promise<ChunkRecord | undefined>,
): Promise<ChunkCommitOutcome> {
  const executionKey = keyOf(request.key.jobId, request.key.scheduledAt);
  const items = transactItems(tables, request, executionKey, expiresAtSeconds);
  const touched = { cronfence: [tables.slicesTable, tables.chunksTable], users: request.writes.map(tableOf) };
  try {
    await onTables(dynamo, touched, () => dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })));
    return 'committed';
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes === undefined) throw notCancelled(error, executionKey);
    // Nothing written: the engine's one retry layer sends it again (lib/engine/send-again.ts).
    const busy = codes.find(isBusyCancellation);
    if (busy !== undefined) throw new StoreBusyError(`chunk ${request.chunk} of ${executionKey}`, busy, { cause: error });
    return cancelledOutcome(codes, error, request, executionKey, readRecord);
  }
}

function transactItems(
  tables: ChunkTables,
  request: ChunkCommitRequest,
  executionKey: string,
  expiresAtSeconds: number,
): TransactWriteItem[] {
  const record: ChunkRecord = {
    executionKey,
    chunk: request.chunk,
    fence: request.fence,
    owner: request.owner,
    committedAt: request.now,
    items: chunkItemCount(request),
    ...(request.inputDigest !== undefined && { inputDigest: request.inputDigest }),
  };
  return [
    {
      ConditionCheck: {
        TableName: tables.slicesTable,
        Key: sliceKeyItem(request.key),
        ConditionExpression: CLAIM_HOLDS,
        ExpressionAttributeNames: { '#owner': 'owner', '#status': 'status' },
        ExpressionAttributeValues: {
          ':fence': { N: String(request.fence) },
          ':owner': { S: request.owner },
          ':running': { S: SliceStatus.Running },
        },
      },
    },
    { Put: { TableName: tables.chunksTable, Item: chunkRecordItem(record, expiresAtSeconds), ConditionExpression: FIRST_RECORD } },
    ...request.writes.map(toTransactItem),
    ...request.outbox.map((outbound) => ({
      Put: {
        TableName: tables.chunksTable,
        Item: outboxItem(newOutboxItem(executionKey, request.chunk, request.fence, request.now, outbound), expiresAtSeconds),
        ConditionExpression: FIRST_RECORD,
      },
    })),
  ];
}

async function cancelledOutcome(
  codes: readonly (string | undefined)[],
  error: unknown,
  request: ChunkCommitRequest,
  executionKey: string,
  readRecord: () => Promise<ChunkRecord | undefined>,
): Promise<ChunkCommitOutcome> {
  const [claim, record, ...rest] = codes;
  if (claim === 'ConditionalCheckFailed')
    throw new FencedOutError(`${executionKey}#chunk-${request.chunk}`, request.fence, { cause: error });
  if (record === 'ConditionalCheckFailed') {
    const existing = await readRecord();
    return existing?.fence === request.fence && existing.owner === request.owner ? 'committed' : 'already-committed';
  }
  const index = rest.findIndex((code) => code === 'ConditionalCheckFailed');
  if (index >= 0) throw new BusinessConditionFailedError(`${executionKey}#chunk-${request.chunk}`, index, { cause: error });
  const code = codes.find((c) => c !== undefined) ?? 'Unknown';
  throw new CommitRejectedError(`${executionKey}#chunk-${request.chunk}`, code, error instanceof Error ? error.message : String(error), {
    cause: error,
  });
}

function notCancelled(error: unknown, executionKey: string): unknown {
  if (isBusyRefusal(error)) return new StoreBusyError(`chunk commit of ${executionKey}`, (error as Error).name, { cause: error });
  if (isClientRejection(error)) return new CommitRejectedError(executionKey, error.name, error.message, { cause: error });
  return error;
}

function tableOf(write: ChunkCommitRequest['writes'][number]): string {
  if ('put' in write) return write.put.tableName;
  if ('update' in write) return write.update.tableName;
  if ('delete' in write) return write.delete.tableName;
  return write.conditionCheck.tableName;
}
