/**
 * FINALIZE — end a slice for good: COMMIT (SUCCEEDED) or give up (DEAD).
 *
 * One TransactWriteItems:
 *   [0] slices[jobId, scheduledAt]
 *       Condition: fence = mine AND owner = me AND status = RUNNING
 *       Effect:    status = outcome, finishedAt, expiresAt (history TTL);
 *                  sweepShard/sweepAt removed (leaves the sweep index)
 *   [1] ledger[executionKey]
 *       Condition: attribute_not_exists(executionKey) — one record per key, ever
 *       Effect:    {fence, owner, committedAt, outcome}
 *   [2..] the handler's own writes (COMMIT only)
 * Outcome: done; or cancelled —
 *   - a ledger record with my fence and owner exists: an earlier try of this
 *     same transaction landed and its reply was lost → done (not a new write);
 *   - [0] or [1] failed otherwise → FencedOutError;
 *   - [2..] failed → BusinessConditionFailedError naming the write;
 *   - TransactionConflict (another transaction on an item) → retried.
 */
import { GetItemCommand, TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { sleep } from '../../core/clock.ts';
import { BusinessConditionFailedError, FencedOutError } from '../../core/errors.ts';
import { executionKey as keyOf } from '../../core/execution-key.ts';
import { isOwnCommit, type LedgerOutcome, type LedgerRecord } from '../../core/ledger.ts';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import { cancellationCodes, onTable } from './errors.ts';
import { ledgerItem, sliceKeyItem, toLedgerRecord } from './items.ts';

export interface FinalizeTables {
  readonly slicesTable: string;
  readonly ledgerTable: string;
}

export interface FinalizeRequest {
  readonly key: SliceKey;
  readonly fence: number;
  readonly owner: string;
  readonly now: number;
  readonly outcome: LedgerOutcome;
  readonly error?: string;
  readonly expiresAtSeconds: number;
  readonly extraWrites?: readonly TransactWriteItem[];
}

const CONFLICT_RETRIES = 5;

export async function finalizeSlice(dynamo: DynamoDBClient, tables: FinalizeTables, request: FinalizeRequest): Promise<void> {
  const executionKey = keyOf(request.key.jobId, request.key.scheduledAt);
  const record: LedgerRecord = {
    executionKey,
    jobId: request.key.jobId,
    scheduledAt: request.key.scheduledAt,
    fence: request.fence,
    owner: request.owner,
    committedAt: request.now,
    outcome: request.outcome,
    error: request.error,
  };
  const items: TransactWriteItem[] = [
    { Update: sliceUpdate(tables.slicesTable, request) },
    {
      Put: {
        TableName: tables.ledgerTable,
        Item: ledgerItem(record),
        ConditionExpression: 'attribute_not_exists(executionKey)',
      },
    },
    ...(request.extraWrites ?? []),
  ];
  for (let attempt = 1; ; attempt++) {
    try {
      await onTable(tables.slicesTable, () => dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })));
      return;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw error;
      if (codes.includes('TransactionConflict') && attempt < CONFLICT_RETRIES) {
        await sleep(20 * attempt);
        continue;
      }
      const existing = await readLedger(dynamo, tables.ledgerTable, executionKey);
      if (isOwnCommit(existing, request.fence, request.owner)) return;
      const businessIndex = codes.findIndex((code, index) => index >= 2 && code === 'ConditionalCheckFailed');
      if (businessIndex >= 2 && codes[0] === undefined && codes[1] === undefined) {
        throw new BusinessConditionFailedError(executionKey, businessIndex - 2, { cause: error });
      }
      throw new FencedOutError(executionKey, request.fence, { cause: error });
    }
  }
}

export async function readLedger(dynamo: DynamoDBClient, ledgerTable: string, executionKey: string): Promise<LedgerRecord | undefined> {
  const result = await onTable(ledgerTable, () =>
    dynamo.send(new GetItemCommand({ TableName: ledgerTable, Key: { executionKey: { S: executionKey } }, ConsistentRead: true })),
  );
  return result.Item ? toLedgerRecord(result.Item) : undefined;
}

function sliceUpdate(tableName: string, request: FinalizeRequest): NonNullable<TransactWriteItem['Update']> {
  const status = request.outcome === 'SUCCEEDED' ? SliceStatus.Succeeded : SliceStatus.Dead;
  const values: Record<string, { S: string } | { N: string }> = {
    ':final': { S: status },
    ':running': { S: SliceStatus.Running },
    ':fence': { N: String(request.fence) },
    ':owner': { S: request.owner },
    ':now': { N: String(request.now) },
    ':expires': { N: String(request.expiresAtSeconds) },
  };
  let set = 'SET #status = :final, finishedAt = :now, expiresAt = :expires';
  if (request.error !== undefined) {
    set += ', lastError = :error';
    values[':error'] = { S: request.error };
  }
  return {
    TableName: tableName,
    Key: sliceKeyItem(request.key),
    UpdateExpression: `${set} REMOVE sweepShard, sweepAt, leaseExpiresAt`,
    ConditionExpression: 'fence = :fence AND #owner = :owner AND #status = :running',
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
    ExpressionAttributeValues: values,
  };
}
