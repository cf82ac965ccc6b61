/**
 * How a finalize (commit or DEAD) maps DynamoDB's refusals. Unit-level: a
 * plain fake client answers with the errors real DynamoDB sends (moto cannot
 * throttle). The conditions themselves are proven against the emulator in
 * test/integration/commit*.test.ts.
 */
import { DynamoDBServiceException, TransactionCanceledException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { finalizeSlice, type FinalizeRequest } from '../../lib/aws/dynamo/finalize-slice.ts';
import { CommitRejectedError, FencedOutError, OutcomeOnRecordError, StoreBusyError } from '../../lib/core/errors.ts';

const T = Date.parse('2026-11-29T12:00:00Z');
const request: FinalizeRequest = { key: { jobId: 'job', scheduledAt: T }, fence: 2, owner: 'w1', now: T, outcome: 'SUCCEEDED', expiresAtSeconds: 0 };
const tables = { slicesTable: 'slices', ledgerTable: 'ledger' };

function cancelled(...codes: string[]): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code, Message: Code === 'None' ? undefined : `${Code} happened` })),
  });
}

/** Answers each TransactWriteItems with the next of `answers` (an error is thrown), GetItem with `ledger`. */
function fakeDynamo(answers: (Error | undefined)[], ledger?: Record<string, unknown>): DynamoDBClient & { transactions: number } {
  const fake = {
    transactions: 0,
    async send(command: { constructor: { name: string } }) {
      if (command.constructor.name === 'GetItemCommand') return { Item: ledger ? marshall(ledger) : undefined };
      fake.transactions++;
      const answer = answers.shift();
      if (answer) throw answer;
      return {};
    },
  };
  return fake as unknown as DynamoDBClient & { transactions: number };
}

describe('finalize refusals', () => {
  it('throttling is sent again and succeeds; it is never a lost lease', async () => {
    const dynamo = fakeDynamo([cancelled('None', 'ThrottlingError'), cancelled('ProvisionedThroughputExceeded', 'None'), undefined]);
    await finalizeSlice(dynamo, tables, request);
    expect(dynamo.transactions).toBe(3);
  });

  it('throttling that does not let up is StoreBusyError (safe to send again), not FencedOutError', async () => {
    const dynamo = fakeDynamo(Array.from({ length: 10 }, () => cancelled('ThrottlingError', 'None')));
    const error = await finalizeSlice(dynamo, tables, request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error).not.toBeInstanceOf(FencedOutError);
  });

  it('a validation error in the transaction is CommitRejectedError naming the code, sent once', async () => {
    const dynamo = fakeDynamo([cancelled('None', 'None', 'ValidationError')]);
    const error = await finalizeSlice(dynamo, tables, request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitRejectedError);
    expect((error as CommitRejectedError).code).toBe('ValidationError');
    expect(dynamo.transactions).toBe(1);
  });

  it('an item collection over its size limit is CommitRejectedError, not a lost lease', async () => {
    const dynamo = fakeDynamo([cancelled('None', 'None', 'ItemCollectionSizeLimitExceeded')]);
    await expect(finalizeSlice(dynamo, tables, request)).rejects.toBeInstanceOf(CommitRejectedError);
  });

  it('a 500 after the SDK retries is an unknown outcome, thrown as it is for the worker to send the same commit again', async () => {
    const serverError = new DynamoDBServiceException({ name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'boom' });
    const error = await finalizeSlice(fakeDynamo([serverError]), tables, request).catch((e: unknown) => e);
    expect(error).toBe(serverError);
  });

  it('a throttled request after the SDK retries is StoreBusyError', async () => {
    const throttled = new DynamoDBServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'slow down' });
    await expect(finalizeSlice(fakeDynamo([throttled]), tables, request)).rejects.toBeInstanceOf(StoreBusyError);
  });

  it('a validation error outside a cancellation is CommitRejectedError, not an unknown outcome', async () => {
    const invalid = new DynamoDBServiceException({ name: 'ValidationException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Item size has exceeded the maximum allowed size' });
    const error = await finalizeSlice(fakeDynamo([invalid]), tables, request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitRejectedError);
    expect((error as Error).message).toContain('maximum allowed size');
  });

  it('DEAD asked for after this claim committed is OutcomeOnRecordError(SUCCEEDED), never success', async () => {
    const ledger = { executionKey: 'job:2026-11-29T12:00:00Z', jobId: 'job', scheduledAt: T, fence: 2, owner: 'w1', committedAt: T, outcome: 'SUCCEEDED' };
    const error = await finalizeSlice(fakeDynamo([cancelled('ConditionalCheckFailed', 'ConditionalCheckFailed')], ledger), tables, { ...request, outcome: 'DEAD' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OutcomeOnRecordError);
    expect((error as OutcomeOnRecordError).recorded).toBe('SUCCEEDED');
  });

  it('a commit after this claim was recorded DEAD is refused, never reported committed', async () => {
    const ledger = { executionKey: 'job:2026-11-29T12:00:00Z', jobId: 'job', scheduledAt: T, fence: 2, owner: 'w1', committedAt: T, outcome: 'DEAD' };
    const error = await finalizeSlice(fakeDynamo([cancelled('ConditionalCheckFailed', 'ConditionalCheckFailed')], ledger), tables, request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeOnRecordError);
    expect((error as OutcomeOnRecordError).recorded).toBe('DEAD');
  });
});
