/**
 * CLAIM — take a slice for one attempt.
 *
 * Key:       slices[jobId, scheduledAt]
 * Condition: the slice exists, and
 *            status = ENQUEUED                                  (first attempt)
 *         or status = FAILED  and nextAttemptAt <= now           (retry is due)
 *         or status = RUNNING and leaseExpiresAt < now           (holder is presumed dead)
 *         or status = RUNNING and leaseMessageId = this message   (the holder's own message
 *            came back: SQS only redelivers it once the holder stopped extending its
 *            visibility, so its heartbeats lapsed by SQS's clock, whatever ours say)
 *            — the same rule as `isClaimable` in core/slice.ts.
 * Effect:    status = RUNNING, fence = fence + 1, owner = me,
 *            leaseExpiresAt = now + leaseMs, sweepAt = now + claimSweepMs,
 *            attempts = attempts + 1, leaseMessageId = the message claimed with.
 *            (leaseMs and claimSweepMs are stored on
 *            the slice by the scanner, so the claimer needs only the key.)
 * Outcome:   won with the new slice (ALL_NEW), or lost with the current slice
 *            as the failed condition returned it (ALL_OLD: no second read;
 *            test/integration/claim-and-fence.test.ts checks the emulator
 *            returns it), read consistently only if it did not.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimOutcome } from '../../core/ports.ts';
import { SliceStatus, type Slice, type SliceKey } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { sliceKeyItem, toSlice } from './items.ts';

export async function claimSlice(
  dynamo: DynamoDBClient,
  tableName: string,
  key: SliceKey,
  owner: string,
  now: number,
  messageId?: string,
): Promise<ClaimOutcome> {
  try {
    const result = await onTable(tableName, () =>
      dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: sliceKeyItem(key),
          UpdateExpression: [
            'SET #status = :running',
            'fence = fence + :one',
            '#owner = :owner',
            'leaseExpiresAt = leaseMs + :now',
            'sweepAt = claimSweepMs + :now',
            'attempts = attempts + :one',
            'startedAt = :now',
            ...(messageId === undefined ? [] : ['leaseMessageId = :message']),
          ].join(', ') + (messageId === undefined ? ' REMOVE nextAttemptAt, leaseMessageId' : ' REMOVE nextAttemptAt'),
          ConditionExpression: [
            'attribute_exists(jobId) AND (',
            '#status = :enqueued',
            'OR (#status = :failed AND nextAttemptAt <= :now)',
            messageId === undefined
              ? 'OR (#status = :running AND leaseExpiresAt < :now))'
              : 'OR (#status = :running AND (leaseExpiresAt < :now OR leaseMessageId = :message)))',
          ].join(' '),
          ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':running': { S: SliceStatus.Running },
            ':enqueued': { S: SliceStatus.Enqueued },
            ':failed': { S: SliceStatus.Failed },
            ':owner': { S: owner },
            ':now': { N: String(now) },
            ':one': { N: '1' },
            ...(messageId === undefined ? {} : { ':message': { S: messageId } }),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return { won: true, slice: toSlice(result.Attributes ?? {}) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { won: false, current: error.Item ? toSlice(error.Item) : await readSlice(dynamo, tableName, key) };
  }
}

export async function readSlice(dynamo: DynamoDBClient, tableName: string, key: SliceKey): Promise<Slice | undefined> {
  const result = await onTable(tableName, () =>
    dynamo.send(new GetItemCommand({ TableName: tableName, Key: sliceKeyItem(key), ConsistentRead: true })),
  );
  return result.Item ? toSlice(result.Item) : undefined;
}
