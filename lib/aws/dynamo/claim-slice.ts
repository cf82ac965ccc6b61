/**
 * CLAIM — take a slice for one attempt.
 *
 * Key:       slices[jobId, scheduledAt]
 * Condition: EXISTS AND (FIRST_ATTEMPT OR RETRY_DUE OR (TAKEOVER AND NOT_THIS_CLAIM)),
 *            where TAKEOVER is LEASE_LONG_EXPIRED or (HOLDERS_MESSAGE_BACK AND LATER_DELIVERY) —
 *            the same rule as `isClaimable` in core/slice.ts.
 * Effect:    claimedFrom = the status before (RUNNING: a takeover), status = RUNNING, fence = fence + 1, owner = me,
 *            leaseExpiresAt = now + leaseMs,
 *            attempts = attempts + 1, leaseMessageId and leaseReceiveCount = the
 *            message and delivery claimed with, claimToken = this request's token. (leaseMs
 *            is stored on the slice by the scanner, so the claimer needs only the key.)
 *            No attribute of the sweep index (its keys, scanId) changes: a claim costs
 *            no index write. A slice still live at its sweep time is re-sent once then
 *            (a duplicate the holder's worker drops) and looked at again later.
 * Outcome:   won with the new slice (ALL_NEW); or, when the condition failed
 *            and the slice shows this request's own token, won as well (the
 *            first send landed and its reply was lost: one attempt, not two);
 *            otherwise lost with the current slice as the failed condition
 *            returned it (ALL_OLD: no second read), read consistently only if
 *            it did not.
 */
import { randomUUID } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimOutcome } from '../../core/ports.ts';
import { isOwnClaimResent, LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice, type SliceKey } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { sliceKeyItem, toSlice } from './items.ts';

/** The slice exists (a message may name one that was never created). */
const EXISTS = 'attribute_exists(jobId)';
/** Never claimed yet. */
const FIRST_ATTEMPT = '#status = :enqueued';
/** A failed attempt whose backoff has passed. */
const RETRY_DUE = '(#status = :failed AND nextAttemptAt <= :now)';
/** The holder stopped renewing long enough ago that no clock skew within the promise explains it. */
const LEASE_LONG_EXPIRED = '(#status = :running AND leaseExpiresAt < :expiredBefore)';
/** The holder's own message came back: SQS saw its heartbeats lapse, by SQS's clock. */
const HOLDERS_MESSAGE_BACK = '(#status = :running AND leaseMessageId = :message)';
/** ...in a later delivery than the one the lease was claimed with (`isLaterDelivery`): not an earlier delivery's claim resent. */
const LATER_DELIVERY = '(attribute_not_exists(leaseReceiveCount) OR leaseReceiveCount < :receiveCount)';
/** Not a resend of the request that already won (SDK retries send the same token). */
const NOT_THIS_CLAIM = '(attribute_not_exists(claimToken) OR claimToken <> :token)';

export async function claimSlice(
  dynamo: DynamoDBClient,
  tableName: string,
  key: SliceKey,
  owner: string,
  now: number,
  messageId?: string,
  receiveCount?: number,
): Promise<ClaimOutcome> {
  const token = randomUUID();
  const messageBack = receiveCount === undefined ? HOLDERS_MESSAGE_BACK : `(${HOLDERS_MESSAGE_BACK} AND ${LATER_DELIVERY})`;
  const takeover = messageId === undefined ? LEASE_LONG_EXPIRED : `(${LEASE_LONG_EXPIRED} OR ${messageBack})`;
  const count = receiveCount === undefined ? undefined : messageId === undefined ? undefined : receiveCount;
  try {
    const result = await onTable(tableName, () =>
      dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: sliceKeyItem(key),
          UpdateExpression: [
            // Operands read the item as it was before this update: the status the claim took it from.
            'SET claimedFrom = #status',
            '#status = :running',
            'fence = fence + :one',
            '#owner = :owner',
            'leaseExpiresAt = leaseMs + :now',
            'attempts = attempts + :one',
            'startedAt = :now',
            'claimToken = :token',
            ...(messageId === undefined ? [] : ['leaseMessageId = :message']),
            ...(count === undefined ? [] : ['leaseReceiveCount = :receiveCount']),
          ].join(', ') +
            ` REMOVE nextAttemptAt${messageId === undefined ? ', leaseMessageId' : ''}${count === undefined ? ', leaseReceiveCount' : ''}`,
          ConditionExpression: `${EXISTS} AND (${FIRST_ATTEMPT} OR ${RETRY_DUE} OR (${takeover} AND ${NOT_THIS_CLAIM}))`,
          ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':running': { S: SliceStatus.Running },
            ':enqueued': { S: SliceStatus.Enqueued },
            ':failed': { S: SliceStatus.Failed },
            ':owner': { S: owner },
            ':now': { N: String(now) },
            ':expiredBefore': { N: String(now - LEASE_EXPIRY_MARGIN_MS) },
            ':one': { N: '1' },
            ':token': { S: token },
            ...(messageId === undefined ? {} : { ':message': { S: messageId } }),
            ...(count === undefined ? {} : { ':receiveCount': { N: String(count) } }),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return { won: true, slice: toSlice(result.Attributes ?? {}) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const current = error.Item ? toSlice(error.Item) : await readSlice(dynamo, tableName, key);
    if (current && isOwnClaimResent(current, owner, token)) return { won: true, slice: current };
    return { won: false, current };
  }
}

export async function readSlice(dynamo: DynamoDBClient, tableName: string, key: SliceKey): Promise<Slice | undefined> {
  const result = await onTable(tableName, () =>
    dynamo.send(new GetItemCommand({ TableName: tableName, Key: sliceKeyItem(key), ConsistentRead: true })),
  );
  return result.Item ? toSlice(result.Item) : undefined;
}
