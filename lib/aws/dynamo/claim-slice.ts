/**
 * CLAIM — take a slice for one attempt, creating it when the message carries
 * its generation's definition (a scanner's message: no write before the claim).
 *
 * Key:       slices[jobId, scheduledAt]
 * Condition: with a definition of generation g:
 *              NO_SLICE OR (SAME_GENERATION AND CLAIMABLE)
 *            without one (a swept or operator's slice, an old message):
 *              EXISTS AND CLAIMABLE
 *            where CLAIMABLE is FIRST_ATTEMPT OR RETRY_DUE OR (TAKEOVER AND NOT_THIS_CLAIM),
 *            and TAKEOVER is LEASE_LONG_EXPIRED or (HOLDERS_MESSAGE_BACK AND LATER_DELIVERY) —
 *            the same rule as `isClaimable` in core/slice.ts.
 * Effect:    claimedFrom = the status before (ENQUEUED for a slice this claim creates; RUNNING: a
 *            takeover), status = RUNNING, fence + 1, owner = me, leaseExpiresAt = now + leaseMs,
 *            attempts + 1, leaseMessageId and leaseReceiveCount = the message and delivery
 *            claimed with, claimToken = this request's token; a slice this claim creates gets the
 *            definition (generation, handler, policies, payload, shard, leaseMs, createdAt), an
 *            existing one keeps its own. No sweep index attribute is written: a claim costs no
 *            index write.
 * RE-CREATE: a second request, only when the first found an instant an older generation left
 *            SKIPPED (`isRecreatable`: a job re-enabled or re-added): condition OLDER_GENERATION_SKIPPED,
 *            effect as a new slice of generation g (attempts 1, the last run's fields removed; the
 *            fence still grows).
 * Outcome:   won with the new slice (ALL_NEW); or, when the condition failed
 *            and the slice shows this request's own token, won as well (the
 *            first send landed and its reply was lost: one attempt, not two);
 *            otherwise lost with the current slice as the failed condition
 *            returned it (ALL_OLD: no second read), read consistently only if
 *            it did not and the slice may exist.
 */
import { randomUUID } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimOutcome } from '../../core/ports.ts';
import { isOwnClaimResent, isRecreatable, LEASE_EXPIRY_MARGIN_MS, SliceStatus, type Slice, type SliceDefinition, type SliceKey } from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { sliceDefinitionFields, sliceKeyItem, toItem, toSlice } from './items.ts';

/** The slice exists (a message without a definition may name one that was never created). */
const EXISTS = 'attribute_exists(jobId)';
/** No slice at this instant yet: the claim creates it. */
const NO_SLICE = 'attribute_not_exists(jobId)';
/** The slice is of the generation the message was sent for. */
const SAME_GENERATION = '#generation = :generation';
/** An older generation left this instant SKIPPED, and it is not a range record: the new generation runs it. */
const OLDER_GENERATION_SKIPPED = '(#status = :skipped AND #generation < :generation AND attribute_not_exists(missedUntil))';
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
/** What an older generation's last run left on an instant a newer one re-creates. */
const LAST_RUN_FIELDS = ['skipReason', 'finishedAt', 'expiresAt', 'lastError', 'nextAttemptAt', 'bufferedAt', 'operatorSlot', 'sweepShard', 'sweepAt'];

export interface ClaimRequest {
  readonly key: SliceKey;
  readonly owner: string;
  readonly now: number;
  readonly messageId?: string;
  readonly receiveCount?: number;
  /** The definition the message carries: the claim creates (or re-creates) the slice with it. */
  readonly run?: SliceDefinition;
}

export async function claimSlice(dynamo: DynamoDBClient, tableName: string, request: ClaimRequest): Promise<ClaimOutcome> {
  const token = randomUUID();
  const first = await conditionalClaim(dynamo, tableName, request.key, claimInput(request, token));
  if (first.won) return { won: true, slice: first.slice };
  const current = first.current ?? (await readSlice(dynamo, tableName, request.key));
  if (current && isOwnClaimResent(current, request.owner, token)) return { won: true, slice: current };
  if (current && request.run && isRecreatable(current, request.run.generation)) {
    const again = await conditionalClaim(dynamo, tableName, request.key, recreateInput(request, request.run, token));
    if (again.won) return { won: true, slice: again.slice };
    const latest = again.current ?? (await readSlice(dynamo, tableName, request.key));
    if (latest && isOwnClaimResent(latest, request.owner, token)) return { won: true, slice: latest };
    return { won: false, current: latest };
  }
  return { won: false, current };
}

type ClaimInput = Pick<ConstructorParameters<typeof UpdateItemCommand>[0], 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>;

/** The claim of an existing slice, or of a new one when the message carries its definition. */
function claimInput(request: ClaimRequest, token: string): ClaimInput {
  const { now, messageId, run } = request;
  const count = messageId === undefined ? undefined : request.receiveCount;
  const messageBack = count === undefined ? HOLDERS_MESSAGE_BACK : `(${HOLDERS_MESSAGE_BACK} AND ${LATER_DELIVERY})`;
  const takeover = messageId === undefined ? LEASE_LONG_EXPIRED : `(${LEASE_LONG_EXPIRED} OR ${messageBack})`;
  const claimable = `(${FIRST_ATTEMPT} OR ${RETRY_DUE} OR (${takeover} AND ${NOT_THIS_CLAIM}))`;
  const created = run === undefined ? {} : definitionValues(run, now);
  return {
    UpdateExpression:
      [
        // Operands read the item as it was before this update: the status the claim took it from (none: created now).
        'SET claimedFrom = if_not_exists(#status, :enqueued)',
        '#status = :running',
        'fence = if_not_exists(fence, :zero) + :one',
        '#owner = :owner',
        run === undefined ? 'leaseExpiresAt = leaseMs + :now' : 'leaseExpiresAt = if_not_exists(leaseMs, :leaseMs) + :now',
        'attempts = if_not_exists(attempts, :zero) + :one',
        'startedAt = :now',
        'claimToken = :token',
        ...(messageId === undefined ? [] : ['leaseMessageId = :message']),
        ...(count === undefined ? [] : ['leaseReceiveCount = :receiveCount']),
        // A slice this claim creates takes the message's definition; an existing one keeps its own.
        ...Object.keys(created).map((name) => `${name.replace(':', '#')} = if_not_exists(${name.replace(':', '#')}, ${name})`),
      ].join(', ') + ` REMOVE nextAttemptAt${messageId === undefined ? ', leaseMessageId' : ''}${count === undefined ? ', leaseReceiveCount' : ''}`,
    ConditionExpression: run === undefined ? `${EXISTS} AND ${claimable}` : `${NO_SLICE} OR (${SAME_GENERATION} AND ${claimable})`,
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner', ...(run && { '#generation': 'generation' }), ...namesOf(created) },
    ExpressionAttributeValues: {
      ...baseValues(request, token),
      ':zero': { N: '0' },
      ':enqueued': { S: SliceStatus.Enqueued },
      ':failed': { S: SliceStatus.Failed },
      ':expiredBefore': { N: String(now - LEASE_EXPIRY_MARGIN_MS) },
      ...(run && { ':generation': { N: String(run.generation) }, ':leaseMs': { N: String(run.policies.leaseMs) } }),
      ...created,
    },
  };
}

/** RE-CREATE: a new slice of `run`'s generation over an older generation's SKIPPED one. */
function recreateInput(request: ClaimRequest, run: SliceDefinition, token: string): ClaimInput {
  const { now, messageId } = request;
  const count = messageId === undefined ? undefined : request.receiveCount;
  const definition = definitionValues(run, now);
  const absent = [...LAST_RUN_FIELDS, ...(run.payload === undefined ? ['#payload'] : []), ...(messageId === undefined ? ['leaseMessageId'] : []), ...(count === undefined ? ['leaseReceiveCount'] : [])];
  return {
    UpdateExpression:
      [
        'SET claimedFrom = :enqueued',
        '#status = :running',
        'fence = fence + :one',
        '#owner = :owner',
        'leaseExpiresAt = :leaseUntil',
        'attempts = :one',
        'startedAt = :now',
        'claimToken = :token',
        ...(messageId === undefined ? [] : ['leaseMessageId = :message']),
        ...(count === undefined ? [] : ['leaseReceiveCount = :receiveCount']),
        ...Object.keys(definition).map((name) => `${name.replace(':', '#')} = ${name}`),
      ].join(', ') + ` REMOVE ${absent.join(', ')}`,
    ConditionExpression: OLDER_GENERATION_SKIPPED,
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner', '#generation': 'generation', ...namesOf(definition), ...(run.payload === undefined && { '#payload': 'payload' }) },
    ExpressionAttributeValues: {
      ...baseValues(request, token),
      ':enqueued': { S: SliceStatus.Enqueued },
      ':skipped': { S: SliceStatus.Skipped },
      ':leaseUntil': { N: String(now + run.policies.leaseMs) },
      ...definition,
    },
  };
}

function baseValues(request: ClaimRequest, token: string): Record<string, AttributeValue> {
  return {
    ':running': { S: SliceStatus.Running },
    ':owner': { S: request.owner },
    ':now': { N: String(request.now) },
    ':one': { N: '1' },
    ':token': { S: token },
    ...(request.messageId === undefined ? {} : { ':message': { S: request.messageId } }),
    ...(request.messageId === undefined || request.receiveCount === undefined ? {} : { ':receiveCount': { N: String(request.receiveCount) } }),
  };
}

/** The definition a created slice carries (the scanner's old copy onto every slice), as `:name` values. */
function definitionValues(run: SliceDefinition, now: number): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(toItem(sliceDefinitionFields(run, now))).map(([name, value]) => [`:${name}`, value]));
}

function namesOf(values: Record<string, AttributeValue>): Record<string, string> {
  return Object.fromEntries(Object.keys(values).map((name) => [name.replace(':', '#'), name.slice(1)]));
}

type ConditionalClaim = { readonly won: true; readonly slice: Slice } | { readonly won: false; readonly current: Slice | undefined };

async function conditionalClaim(dynamo: DynamoDBClient, tableName: string, key: SliceKey, input: ClaimInput): Promise<ConditionalClaim> {
  try {
    const result = await onTable(tableName, () =>
      dynamo.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: sliceKeyItem(key),
          ...input,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return { won: true, slice: toSlice(result.Attributes ?? {}) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { won: false, current: error.Item ? toSlice(error.Item) : undefined };
  }
}

export async function readSlice(dynamo: DynamoDBClient, tableName: string, key: SliceKey): Promise<Slice | undefined> {
  const result = await onTable(tableName, () =>
    dynamo.send(new GetItemCommand({ TableName: tableName, Key: sliceKeyItem(key), ConsistentRead: true })),
  );
  return result.Item ? toSlice(result.Item) : undefined;
}
