/**
 * RENEW — a heartbeat.
 *
 * Key:       slices[jobId, scheduledAt]
 * Condition: fence = mine AND status = RUNNING (`holdsLease`, core/slice-transitions.ts)
 * Effect:    leaseExpiresAt = now + leaseMs (an attribute no index projects,
 *            so a heartbeat is one write unit and no index write); when
 *            disarming, leaseMessageId removed (its message coming back no
 *            longer admits a standby: the holder could not keep it hidden);
 *            when re-arming, leaseMessageId set again (MessageBackChange)
 * Outcome:   renewed, or LeaseLostError: a standby claimed it (fence moved on)
 *            or it is no longer running.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LeaseLostError } from '../../core/errors.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { MessageBackChange } from '../../core/ports.ts';
import { SliceStatus, type SliceKey } from '../../core/slice.ts';
import { conditionalUpdate } from './errors.ts';
import { sliceKeyItem } from './items.ts';

export async function renewLease(
  dynamo: DynamoDBClient,
  tableName: string,
  key: SliceKey,
  fence: number,
  now: number,
  leaseMs: number,
  messageBack?: MessageBackChange,
): Promise<void> {
  const change = messageBack === undefined ? '' : messageBack === 'disarm' ? ' REMOVE leaseMessageId' : ', leaseMessageId = :message';
  await conditionalUpdate(
    dynamo,
    {
      TableName: tableName,
      Key: sliceKeyItem(key),
      UpdateExpression: `SET leaseExpiresAt = :expires${change}`,
      ConditionExpression: 'fence = :fence AND #status = :running',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':expires': { N: String(now + leaseMs) },
        ':fence': { N: String(fence) },
        ':running': { S: SliceStatus.Running },
        ...(typeof messageBack === 'object' && { ':message': { S: messageBack.rearm } }),
      },
    },
    (error) => {
      throw new LeaseLostError(executionKey(key.jobId, key.scheduledAt), fence, { cause: error });
    },
  );
}
