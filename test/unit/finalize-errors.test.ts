/**
 * How a finalize (commit or DEAD) maps DynamoDB's refusals, on both of its
 * paths: the slice's own UpdateItem (no business writes) and the transaction
 * (with them). Unit-level: a plain fake client answers with the errors real
 * DynamoDB sends (moto cannot throttle). The conditions themselves are proven
 * against the emulator in test/integration/commit*.test.ts.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  TransactionCanceledException,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { finalizeSlice, type FinalizeRequest } from '../../lib/aws/dynamo/finalize-slice.ts';
import { CommitRejectedError, FencedOutError, OutcomeOnRecordError, StoreBusyError } from '../../lib/core/errors.ts';

const T = Date.parse('2026-11-29T12:00:00Z');
const payout = { Put: { TableName: 'payouts', Item: marshall({ id: 'p1' }) } };
/** With one business write: the transaction path. */
const request: FinalizeRequest = {
  key: { jobId: 'job', scheduledAt: T },
  fence: 2,
  owner: 'w1',
  now: T,
  outcome: 'SUCCEEDED',
  extraWrites: [payout],
};
/** Without: the slice's own UpdateItem. */
const alone: FinalizeRequest = { ...request, extraWrites: [] };

function cancelled(...codes: string[]): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code, Message: Code === 'None' ? undefined : `${Code} happened` })),
  });
}

/** A final slice as the store would hold it after a claim by w1 at fence 2 ended with `status`. */
function finalSlice(status: 'SUCCEEDED' | 'DEAD'): Record<string, unknown> {
  return { jobId: 'job', scheduledAt: T, status, fence: 2, owner: 'w1', attempts: 1, finishedAt: T, handler: 'h', shard: 0, createdAt: T };
}

function conditionFailed(item?: Record<string, unknown>): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    Item: item ? marshall(item) : undefined,
  });
}

/** Answers each write (UpdateItem or TransactWriteItems) with the next of `answers` (an error is thrown), GetItem with `slice`. */
function fakeDynamo(answers: (Error | undefined)[], slice?: Record<string, unknown>): DynamoDBClient & { writes: string[] } {
  const fake = {
    writes: [] as string[],
    async send(command: { constructor: { name: string } }) {
      if (command.constructor.name === 'GetItemCommand') return { Item: slice ? marshall(slice) : undefined };
      fake.writes.push(command.constructor.name);
      const answer = answers.shift();
      if (answer) throw answer;
      return {};
    },
  };
  return fake as unknown as DynamoDBClient & { writes: string[] };
}

describe('finalize paths', () => {
  it('without business writes is one UpdateItem of the slice; with them one transaction', async () => {
    const single = fakeDynamo([undefined]);
    await finalizeSlice(single, 'slices', alone);
    expect(single.writes).toEqual(['UpdateItemCommand']);
    const transaction = fakeDynamo([undefined]);
    await finalizeSlice(transaction, 'slices', request);
    expect(transaction.writes).toEqual(['TransactWriteItemsCommand']);
  });

  it('a refused UpdateItem whose slice shows this very commit is success (the reply was lost)', async () => {
    await finalizeSlice(fakeDynamo([conditionFailed(finalSlice('SUCCEEDED'))]), 'slices', alone);
  });

  it('a refused UpdateItem whose slice moved on to another claim is FencedOutError', async () => {
    const error = await finalizeSlice(
      fakeDynamo([conditionFailed({ ...finalSlice('SUCCEEDED'), fence: 3, owner: 'w2' })]),
      'slices',
      alone,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FencedOutError);
  });

  it('a refused UpdateItem of a slice still RUNNING under a newer claim is FencedOutError', async () => {
    const running = { ...finalSlice('SUCCEEDED'), status: 'RUNNING', fence: 3, owner: 'w2' };
    const error = await finalizeSlice(fakeDynamo([conditionFailed(running)]), 'slices', alone).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FencedOutError);
  });

  it('a transaction conflict on the UpdateItem is StoreBusyError, sent once: the engine sends it again (send-again.ts)', async () => {
    const conflict = new DynamoDBServiceException({
      name: 'TransactionConflictException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'conflict',
    });
    const dynamo = fakeDynamo([conflict, undefined]);
    const error = await finalizeSlice(dynamo, 'slices', alone).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect(dynamo.writes).toHaveLength(1);
  });
});

describe('finalize refusals', () => {
  it('a throttled item is StoreBusyError (safe to send again), sent once, and never a lost lease', async () => {
    for (const codes of [
      ['None', 'ThrottlingError'],
      ['ProvisionedThroughputExceeded', 'None'],
    ]) {
      const dynamo = fakeDynamo([cancelled(...codes), undefined]);
      const error = await finalizeSlice(dynamo, 'slices', request).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreBusyError);
      expect(error).not.toBeInstanceOf(FencedOutError);
      expect(dynamo.writes).toHaveLength(1);
    }
  });

  it('a validation error in the transaction is CommitRejectedError naming the code, sent once', async () => {
    const dynamo = fakeDynamo([cancelled('None', 'ValidationError')]);
    const error = await finalizeSlice(dynamo, 'slices', request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitRejectedError);
    expect((error as CommitRejectedError).code).toBe('ValidationError');
    expect(dynamo.writes).toHaveLength(1);
  });

  it('an item collection over its size limit is CommitRejectedError, not a lost lease', async () => {
    const dynamo = fakeDynamo([cancelled('None', 'ItemCollectionSizeLimitExceeded')]);
    await expect(finalizeSlice(dynamo, 'slices', request)).rejects.toBeInstanceOf(CommitRejectedError);
  });

  it('a 500 after the SDK retries is an unknown outcome, thrown as it is for the worker to send the same commit again', async () => {
    const serverError = new DynamoDBServiceException({
      name: 'InternalServerError',
      $fault: 'server',
      $metadata: { httpStatusCode: 500 },
      message: 'boom',
    });
    const error = await finalizeSlice(fakeDynamo([serverError]), 'slices', request).catch((e: unknown) => e);
    expect(error).toBe(serverError);
  });

  it('a throttled request after the SDK retries is StoreBusyError', async () => {
    const throttled = new DynamoDBServiceException({
      name: 'ThrottlingException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'slow down',
    });
    await expect(finalizeSlice(fakeDynamo([throttled]), 'slices', request)).rejects.toBeInstanceOf(StoreBusyError);
  });

  it('a validation error outside a cancellation is CommitRejectedError, not an unknown outcome', async () => {
    const invalid = new DynamoDBServiceException({
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'Item size has exceeded the maximum allowed size',
    });
    const error = await finalizeSlice(fakeDynamo([invalid]), 'slices', request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommitRejectedError);
    expect((error as Error).message).toContain('maximum allowed size');
  });

  it('DEAD asked for after this claim committed is OutcomeOnRecordError(SUCCEEDED), never success', async () => {
    const error = await finalizeSlice(fakeDynamo([cancelled('ConditionalCheckFailed', 'None')], finalSlice('SUCCEEDED')), 'slices', {
      ...request,
      outcome: 'DEAD',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeOnRecordError);
    expect((error as OutcomeOnRecordError).recorded).toBe('SUCCEEDED');
  });

  it('a commit after this claim was recorded DEAD is refused, never reported committed', async () => {
    const error = await finalizeSlice(
      fakeDynamo([cancelled('ConditionalCheckFailed', 'None')], finalSlice('DEAD')),
      'slices',
      request,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeOnRecordError);
    expect((error as OutcomeOnRecordError).recorded).toBe('DEAD');
  });
});
