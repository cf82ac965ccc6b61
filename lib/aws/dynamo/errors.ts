/**
 * Recognising DynamoDB's expected failures by class, and naming a missing
 * table instead of letting ResourceNotFoundException through.
 */
import {
  ConditionalCheckFailedException,
  ResourceNotFoundException,
  TransactionCanceledException,
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

/** Runs `operation`; a missing table becomes a {@link MissingResourceError} naming it. */
export async function onTable<T>(tableName: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof ResourceNotFoundException) throw new MissingResourceError('table', tableName, { cause: error });
    throw error;
  }
}
