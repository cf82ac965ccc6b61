/**
 * FINALIZE — end a slice for good: COMMIT (SUCCEEDED) or give up (DEAD).
 *
 * The slice item is the ledger (core/ledger.ts): ending it is one write.
 *   [0] slices[jobId, scheduledAt]
 *       Condition: fence = mine AND owner = me AND status = RUNNING (`mayFinalize`,
 *                  core/slice-transitions.ts)
 *       Effect:    status = outcome, finishedAt, lastError (DEAD); sweepShard/sweepAt
 *                  and the lease removed (leaves the sweep index); no TTL: the record
 *                  of a final execution is kept
 *   [1..] the handler's own writes (COMMIT only)
 * Without business writes: one conditional UpdateItem (1 WRU for an item
 * under 1 KB). With them: one TransactWriteItems of [0] and [1..].
 * Outcome: done; or refused (condition failed or transaction cancelled) —
 *   - [0] failed: judged by core's `finalizeRefusal` (slice-transitions.ts)
 *     from the ledger record the slice carries: my fence, owner and this
 *     outcome (an earlier try landed, its reply lost) → done; my fence and
 *     owner with the other outcome → OutcomeOnRecordError; else FencedOutError;
 *   - [1..] failed → BusinessConditionFailedError naming the write;
 *   - busy (TransactionConflict, throttling) → StoreBusyError (nothing
 *     written: safe to send again; the engine's one retry layer does,
 *     lib/engine/send-again.ts);
 *   - anything else (ValidationError, ItemCollectionSizeLimitExceeded) →
 *     CommitRejectedError: sending it again would fail the same way.
 * Not cancelled: a validation error → CommitRejectedError; throttling or 5xx
 * after the SDK's own retries → StoreBusyError; a missing table →
 * MissingResourceError naming it; a timeout or lost connection (outcome
 * unknown) is thrown as it is, for the caller to retry as the same commit.
 */
import { TransactWriteItemsCommand, UpdateItemCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { BusinessConditionFailedError, CommitRejectedError, StoreBusyError } from '../../core/errors.ts';
import { executionKey as keyOf } from '../../core/execution-key.ts';
import { ledgerRecordOf } from '../../core/ledger.ts';
import { SliceStatus } from '../../core/slice.ts';
import { finalizeRefusal, type Finalize } from '../../core/slice-transitions.ts';
import { readSlice } from './claim-slice.ts';
import {
  cancellationCodes,
  isBusyCancellation,
  isBusyRefusal,
  isClientRejection,
  isConditionFailure,
  onTable,
  onTables,
} from './errors.ts';
import { sliceKeyItem, toSlice } from './items.ts';

export interface FinalizeRequest extends Finalize {
  readonly extraWrites?: readonly TransactWriteItem[];
}

/** Why a try of the finalize wrote nothing and may be sent again, or undefined if it is final. */
type TryResult = { readonly busy: string; readonly error: unknown } | undefined;

export async function finalizeSlice(dynamo: DynamoDBClient, slicesTable: string, request: FinalizeRequest): Promise<void> {
  const executionKey = keyOf(request.key.jobId, request.key.scheduledAt);
  const busy =
    (request.extraWrites ?? []).length === 0
      ? await updateOnly(dynamo, slicesTable, request, executionKey)
      : await transaction(dynamo, slicesTable, request, executionKey);
  if (busy !== undefined) throw new StoreBusyError(`commit of ${executionKey}`, busy.busy, { cause: busy.error });
}

/** No business writes: the slice's own conditional UpdateItem; a refusal is judged from the item the condition saw. */
async function updateOnly(dynamo: DynamoDBClient, slicesTable: string, request: FinalizeRequest, executionKey: string): Promise<TryResult> {
  try {
    await onTable(slicesTable, () =>
      dynamo.send(new UpdateItemCommand({ ...sliceUpdate(slicesTable, request), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })),
    );
    return undefined;
  } catch (error) {
    if (isConditionFailure(error)) {
      const refusal = finalizeRefusal(ledgerRecordOf(error.Item ? toSlice(error.Item) : undefined), request, executionKey, error);
      if (refusal === undefined) return undefined;
      throw refusal;
    }
    if ((error as Error).name === 'TransactionConflictException') return { busy: 'TransactionConflict', error };
    throw notCancelled(error, executionKey);
  }
}

async function transaction(
  dynamo: DynamoDBClient,
  slicesTable: string,
  request: FinalizeRequest,
  executionKey: string,
): Promise<TryResult> {
  const extra = request.extraWrites ?? [];
  const items: TransactWriteItem[] = [{ Update: sliceUpdate(slicesTable, request) }, ...extra];
  try {
    await onTables(dynamo, { cronfence: [slicesTable], users: extra.map(tableOf) }, () =>
      dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })),
    );
    return undefined;
  } catch (error) {
    const codes = cancellationCodes(error);
    if (codes === undefined) throw notCancelled(error, executionKey);
    const busy = codes.find(isBusyCancellation);
    if (busy !== undefined) return { busy, error };
    const [slice, ...business] = codes;
    if (slice === 'ConditionalCheckFailed') {
      const refusal = finalizeRefusal(ledgerRecordOf(await readSlice(dynamo, slicesTable, request.key)), request, executionKey, error);
      if (refusal === undefined) return undefined;
      throw refusal;
    }
    const businessIndex = business.findIndex((code) => code === 'ConditionalCheckFailed');
    if (businessIndex >= 0) throw new BusinessConditionFailedError(executionKey, businessIndex, { cause: error });
    const code = codes.find((c) => c !== undefined) ?? 'Unknown';
    throw new CommitRejectedError(executionKey, code, describe(error), { cause: error });
  }
}

function notCancelled(error: unknown, executionKey: string): unknown {
  if (isBusyRefusal(error)) return new StoreBusyError(`commit of ${executionKey}`, (error as Error).name, { cause: error });
  if (isClientRejection(error)) return new CommitRejectedError(executionKey, error.name, error.message, { cause: error });
  return error;
}

function tableOf(item: TransactWriteItem): string {
  return item.Put?.TableName ?? item.Update?.TableName ?? item.Delete?.TableName ?? item.ConditionCheck?.TableName ?? '';
}

function describe(error: unknown): string {
  const reasons = (error as { CancellationReasons?: { Code?: string; Message?: string }[] }).CancellationReasons ?? [];
  const messages = reasons.filter((reason) => reason.Code !== 'None').map((reason) => reason.Message ?? reason.Code);
  return messages.join('; ') || (error instanceof Error ? error.message : String(error));
}

function sliceUpdate(tableName: string, request: FinalizeRequest): NonNullable<TransactWriteItem['Update']> {
  const status = request.outcome === 'SUCCEEDED' ? SliceStatus.Succeeded : SliceStatus.Dead;
  const values: Record<string, { S: string } | { N: string }> = {
    ':final': { S: status },
    ':running': { S: SliceStatus.Running },
    ':fence': { N: String(request.fence) },
    ':owner': { S: request.owner },
    ':now': { N: String(request.now) },
  };
  let set = 'SET #status = :final, finishedAt = :now';
  if (request.error !== undefined) {
    set += ', lastError = :error';
    values[':error'] = { S: request.error };
  }
  return {
    TableName: tableName,
    Key: sliceKeyItem(request.key),
    UpdateExpression: `${set} REMOVE sweepShard, sweepAt, leaseExpiresAt, expiresAt`,
    ConditionExpression: 'fence = :fence AND #owner = :owner AND #status = :running',
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
    ExpressionAttributeValues: values,
  };
}
