/**
 * Recognising DynamoDB's expected failures by class, and naming a missing
 * table instead of letting ResourceNotFoundException through.
 */
import {
  ConditionalCheckFailedException,
  DescribeTableCommand,
  ResourceNotFoundException,
  TransactionCanceledException,
  UpdateItemCommand,
  type DynamoDBClient,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { retryDelayMs, type BackoffPolicy, type Random } from '../../core/backoff.ts';
import { MissingResourceError } from '../../core/errors.ts';

/** A busy operator trigger's next try (of four): full jitter under 50, 100, 200 ms. */
const BUSY_BACKOFF: BackoffPolicy = { baseMs: 50, maxMs: 200 };
/** Unprocessed items or keys of a batch, sent again (tries 2 to 6): full jitter under 200 ms doubling to 3.2 s. */
const UNPROCESSED_BACKOFF: BackoffPolicy = { baseMs: 200, maxMs: 3200 };

/** The wait before sending a busy transaction again after its `attempt`th try (from 1). */
export function busyBackoffMs(attempt: number, random: Random): number {
  return retryDelayMs(attempt, BUSY_BACKOFF, random);
}

/** The wait before the `tries`th send (from 2) of a batch's unprocessed items. */
export function unprocessedBackoffMs(tries: number, random: Random): number {
  return retryDelayMs(tries - 1, UNPROCESSED_BACKOFF, random);
}

/**
 * Cancellation codes of a transaction that wrote nothing and may simply be
 * sent again: a conflicting transaction on one of its items, or throttling.
 */
const BUSY_CANCELLATION_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

export function isBusyCancellation(code: string | undefined): boolean {
  return code !== undefined && BUSY_CANCELLATION_CODES.has(code);
}

/** A request DynamoDB refused for now (throttled, 5xx): not applied, and worth sending again later. */
export function isBusyRefusal(error: unknown): boolean {
  const sdkError = error as Parameters<typeof isThrottlingError>[0];
  return error instanceof Error && (isThrottlingError(sdkError) || isServerError(sdkError));
}

/**
 * A request whose outcome is unknown: it timed out or its connection broke,
 * so it may or may not have been applied.
 */
export function isUnknownOutcome(error: unknown): boolean {
  return error instanceof Error && isTransientError(error as Parameters<typeof isTransientError>[0]);
}

/** The service rejected the request itself (a validation error, say): sending it again fails the same way. */
export function isClientRejection(error: unknown): error is Error & { name: string } {
  return error instanceof Error && (error as { $fault?: string }).$fault === 'client' && !isBusyRefusal(error);
}

export function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException;
}

/** Per-item cancellation codes of a cancelled transaction, or undefined if it was not cancelled. */
export function cancellationCodes(error: unknown): (string | undefined)[] | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return (error.CancellationReasons ?? []).map((reason) => (reason.Code === 'None' ? undefined : reason.Code));
}

/**
 * A conditional UpdateItem whose failed condition is an expected outcome:
 * `onConditionFailed` throws the domain error, or returns to accept it.
 * @returns whether the item was written.
 */
export async function conditionalUpdate(
  dynamo: DynamoDBClient,
  input: UpdateItemCommandInput & { TableName: string },
  onConditionFailed: (error: ConditionalCheckFailedException) => void,
): Promise<boolean> {
  try {
    await onTable(input.TableName, () => dynamo.send(new UpdateItemCommand(input)));
    return true;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    onConditionFailed(error);
    return false;
  }
}

/**
 * Runs `operation`, a request that touches several tables (a transaction); a
 * missing table becomes a {@link MissingResourceError} naming the one that is
 * actually missing (DynamoDB's error does not say which).
 */
export async function onTables<T>(
  dynamo: DynamoDBClient,
  tables: { readonly cronfence: readonly string[]; readonly users?: readonly string[] },
  operation: () => Promise<T>,
): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    const users = new Set(tables.users ?? []);
    for (const tableName of new Set([...tables.cronfence, ...users])) {
      try {
        await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
      } catch (describeError) {
        if (!(describeError instanceof ResourceNotFoundException)) continue;
        throw new MissingResourceError('table', tableName, {
          cause: error,
          usersOwn: users.has(tableName) && !tables.cronfence.includes(tableName),
        });
      }
    }
    throw error;
  }
}

/** Runs `operation`; a missing table becomes a {@link MissingResourceError} naming it. */
export async function onTable<T>(tableName: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof ResourceNotFoundException) throw new MissingResourceError('table', tableName, { cause: error });
    throw error;
  }
}
