/**
 * Recognising DynamoDB's expected failures by class, and naming a missing
 * table instead of letting ResourceNotFoundException through.
 */
import {
  ConditionalCheckFailedException,
  ResourceNotFoundException,
  TransactionCanceledException,
  UpdateItemCommand,
  type DynamoDBClient,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { MissingResourceError } from '../../core/errors.ts';

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

/** Runs `operation`; a missing table becomes a {@link MissingResourceError} naming it. */
export async function onTable<T>(tableName: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof ResourceNotFoundException) throw new MissingResourceError('table', tableName, { cause: error });
    throw error;
  }
}
