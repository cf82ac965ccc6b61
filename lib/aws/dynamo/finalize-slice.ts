/**
 * FINALIZE — end a slice for good: COMMIT (SUCCEEDED) or give up (DEAD).
 *
 * One TransactWriteItems:
 *   [0] slices[jobId, scheduledAt]
 *       Condition: fence = mine AND owner = me AND status = RUNNING (`mayFinalize`,
 *                  core/slice-transitions.ts)
 *       Effect:    status = outcome, finishedAt, expiresAt (history TTL);
 *                  sweepShard/sweepAt removed (leaves the sweep index)
 *   [1] ledger[executionKey]
 *       Condition: attribute_not_exists(executionKey) — one record per key, ever
 *       Effect:    {fence, owner, committedAt, outcome}
 *   [2..] the handler's own writes (COMMIT only)
 * Outcome: done; or cancelled (judged as `refusedFinalize` does) —
 *   - a ledger record with my fence, owner and this outcome exists: an earlier
 *     try of this same transaction landed and its reply was lost → done;
 *     my fence and owner with the other outcome → OutcomeOnRecordError;
 *   - [0] or [1] failed otherwise → FencedOutError;
 *   - [2..] failed → BusinessConditionFailedError naming the write;
 *   - busy (TransactionConflict, throttling) → retried a few times with
 *     backoff, then StoreBusyError (nothing written: safe to send again);
 *   - anything else (ValidationError, ItemCollectionSizeLimitExceeded) →
 *     CommitRejectedError: sending it again would fail the same way.
 * Not cancelled: a validation error → CommitRejectedError; throttling or 5xx
 * after the SDK's own retries → StoreBusyError; a missing table →
 * MissingResourceError naming it; a timeout or lost connection (outcome
 * unknown) is thrown as it is, for the caller to retry as the same commit.
 */
import { GetItemCommand, TransactWriteItemsCommand, type DynamoDBClient, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { sleep } from '../../core/clock.ts';
import {
  BusinessConditionFailedError,
  CommitRejectedError,
  FencedOutError,
  OutcomeOnRecordError,
  StoreBusyError,
} from '../../core/errors.ts';
import { executionKey as keyOf } from '../../core/execution-key.ts';
import { isOwnClaim, isOwnCommit, type LedgerOutcome, type LedgerRecord } from '../../core/ledger.ts';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import { cancellationCodes, isBusyCancellation, isBusyRefusal, isClientRejection, onTable, onTables } from './errors.ts';
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

const BUSY_RETRIES = 4;

/** Full jitter, 25 ms doubling: a few retries stay well inside a lease. */
function jitteredBackoffMs(attempt: number): number {
  return Math.floor(Math.random() * 25 * 2 ** attempt);
}

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
  const touched = { cronfence: [tables.slicesTable, tables.ledgerTable], users: (request.extraWrites ?? []).map(tableOf) };
  for (let attempt = 1; ; attempt++) {
    try {
      await onTables(dynamo, touched, () => dynamo.send(new TransactWriteItemsCommand({ TransactItems: items })));
      return;
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes === undefined) throw notCancelled(error, executionKey);
      const busy = codes.find(isBusyCancellation);
      if (busy !== undefined) {
        if (attempt >= BUSY_RETRIES) throw new StoreBusyError(`commit of ${executionKey}`, busy, { cause: error });
        await sleep(jitteredBackoffMs(attempt));
        continue;
      }
      const refusal = await cancelledOutcome(dynamo, tables.ledgerTable, request, executionKey, codes, error);
      if (refusal === undefined) return;
      throw refusal;
    }
  }
}

/** Why a cancelled finalize wrote nothing, as the error to throw (or undefined: my own earlier try landed). */
async function cancelledOutcome(
  dynamo: DynamoDBClient,
  ledgerTable: string,
  request: FinalizeRequest,
  executionKey: string,
  codes: readonly (string | undefined)[],
  error: unknown,
): Promise<Error | undefined> {
  const [slice, ledger, ...business] = codes;
  if (slice === 'ConditionalCheckFailed' || ledger === 'ConditionalCheckFailed') {
    const existing = await readLedger(dynamo, ledgerTable, executionKey);
    if (isOwnCommit(existing, request.fence, request.owner, request.outcome)) return undefined;
    if (isOwnClaim(existing, request.fence, request.owner)) return new OutcomeOnRecordError(executionKey, existing.outcome, { cause: error });
    return new FencedOutError(executionKey, request.fence, { cause: error });
  }
  const businessIndex = business.findIndex((code) => code === 'ConditionalCheckFailed');
  if (businessIndex >= 0) return new BusinessConditionFailedError(executionKey, businessIndex, { cause: error });
  const code = codes.find((c) => c !== undefined) ?? 'Unknown';
  return new CommitRejectedError(executionKey, code, describe(error), { cause: error });
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
