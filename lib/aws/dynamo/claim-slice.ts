/**
 * CLAIM — take a slice for one attempt, creating it when the worker passes the
 * job's stored definition of the message's generation (a scanner's message at an
 * occurrence: core/claim-plan.ts; no write before the claim).
 *
 * Key:       slices[jobId, scheduledAt]
 * CREATE:    with a definition of generation g, first a PutItem of the whole new slice
 *            (definition, status RUNNING, fence 1, attempts 1, the lease), condition NO_SLICE:
 *            the happy path's one request. A put, not an update, because the new item is known
 *            whole: nothing of an existing slice is read or kept (and an emulator parses no
 *            update expression: moto takes ~1 ms per SET action, ~20 ms for the update form).
 * CLAIM:     when the slice exists (a duplicate or returned message, a swept, reconciled or
 *            operator's slice, a retry), an UpdateItem with condition
 *              EXISTS AND [SAME_GENERATION AND] CLAIMABLE
 *            where CLAIMABLE is FIRST_ATTEMPT OR RETRY_DUE OR (TAKEOVER AND NOT_THIS_CLAIM),
 *            and TAKEOVER is LEASE_LONG_EXPIRED or (HOLDERS_MESSAGE_BACK AND LATER_DELIVERY) —
 *            the same rule as `isClaimable` in core/slice.ts, which decides after a failed
 *            CREATE whether this request is worth sending.
 * Effect:    claimedFrom = the status before (ENQUEUED for a slice this claim creates; RUNNING: a
 *            takeover), status = RUNNING, fence + 1, owner = me, leaseExpiresAt = now + leaseMs,
 *            attempts + 1, leaseMessageId and leaseReceiveCount = the message and delivery
 *            claimed with, claimToken = this request's token; a slice this claim creates gets the
 *            definition (generation, handler, policies, payload, shard, leaseMs, createdAt), an
 *            existing one keeps its own. No sweep index attribute is written: a claim costs no
 *            index write.
 * RE-CREATE: instead of CLAIM, when CREATE found an instant an older generation left SKIPPED
 *            (`isRecreatable`: a job re-enabled or re-added): condition OLDER_GENERATION_SKIPPED,
 *            effect as a new slice of generation g (attempts 1, the last run's fields removed; the
 *            fence still grows).
 * Outcome:   won with the new slice; or, when the condition failed
 *            and the slice shows this request's own token, won as well (the
 *            first send landed and its reply was lost: one attempt, not two);
 *            otherwise lost with the current slice as the failed condition
 *            returned it (ALL_OLD: no second read), read consistently only if
 *            it did not and the slice may exist.
 */
import { randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClaimOutcome } from '../../core/ports.ts';
import {
  isClaimable,
  isOwnClaimResent,
  isRecreatable,
  LEASE_EXPIRY_MARGIN_MS,
  SliceStatus,
  type Slice,
  type SliceDefinition,
  type SliceKey,
} from '../../core/slice.ts';
import { isConditionFailure, onTable } from './errors.ts';
import { sliceDefinitionFields, sliceKeyItem, toItem, toSlice } from './items.ts';

/** The slice exists (a claim without a definition may name one that was never created). */
const EXISTS = 'attribute_exists(jobId)';
/** No slice at this instant yet: the claim creates it. */
const NO_SLICE = 'attribute_not_exists(jobId)';
/** The slice is of the generation the definition is of. */
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
const LAST_RUN_FIELDS = [
  'skipReason',
  'finishedAt',
  'expiresAt',
  'lastError',
  'nextAttemptAt',
  'bufferedAt',
  'operatorSlot',
  'sweepShard',
  'sweepAt',
];

export interface ClaimRequest {
  readonly key: SliceKey;
  readonly owner: string;
  readonly now: number;
  readonly messageId?: string;
  readonly receiveCount?: number;
  /** The job's stored definition of the message's generation: the claim creates (or re-creates) the slice with it. */
  readonly run?: SliceDefinition;
}

export async function claimSlice(dynamo: DynamoDBClient, tableName: string, request: ClaimRequest): Promise<ClaimOutcome> {
  const token = randomUUID();
  const { run } = request;
  if (run === undefined)
    return settle(dynamo, tableName, request, token, await conditionalClaim(dynamo, tableName, request.key, claimInput(request, token)));
  const created = await createClaimed(dynamo, tableName, request, run, token);
  if (created.won) return created;
  const current = created.current;
  if (current && isOwnClaimResent(current, request.owner, token)) return { won: true, slice: current };
  if (!isClaimable(current, request.now, request.messageId, token, request.receiveCount, run.generation)) return { won: false, current };
  const input = current && isRecreatable(current, run.generation) ? recreateInput(request, run, token) : claimInput(request, token);
  return settle(dynamo, tableName, request, token, await conditionalClaim(dynamo, tableName, request.key, input));
}

/** A conditional claim's outcome: won, won by this very request resent, or lost with the slice as it is. */
async function settle(
  dynamo: DynamoDBClient,
  tableName: string,
  request: ClaimRequest,
  token: string,
  attempt: ConditionalClaim,
): Promise<ClaimOutcome> {
  if (attempt.won) return { won: true, slice: attempt.slice };
  const current = attempt.current ?? (await readSlice(dynamo, tableName, request.key));
  if (current && isOwnClaimResent(current, request.owner, token)) return { won: true, slice: current };
  return { won: false, current };
}

/** CREATE: the whole new slice, claimed, in one conditional put. */
async function createClaimed(
  dynamo: DynamoDBClient,
  tableName: string,
  request: ClaimRequest,
  run: SliceDefinition,
  token: string,
): Promise<ConditionalClaim> {
  const { now, messageId } = request;
  const slice: Record<string, unknown> = {
    ...sliceDefinitionFields(run, now),
    claimedFrom: SliceStatus.Enqueued,
    status: SliceStatus.Running,
    fence: 1,
    owner: request.owner,
    leaseExpiresAt: now + run.policies.leaseMs,
    attempts: 1,
    startedAt: now,
    claimToken: token,
    leaseMessageId: messageId,
    leaseReceiveCount: messageId === undefined ? undefined : request.receiveCount,
  };
  const item = { ...toItem(slice), ...sliceKeyItem(request.key) };
  try {
    await onTable(tableName, () =>
      dynamo.send(
        new PutItemCommand({
          TableName: tableName,
          Item: item,
          ConditionExpression: NO_SLICE,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      ),
    );
    return { won: true, slice: toSlice(item) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { won: false, current: error.Item ? toSlice(error.Item) : undefined };
  }
}

type ClaimInput = Pick<
  ConstructorParameters<typeof UpdateItemCommand>[0],
  'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
>;

/** CLAIM: an existing slice, of the definition's generation when one is given. */
function claimInput(request: ClaimRequest, token: string): ClaimInput {
  const { now, messageId, run } = request;
  const count = messageId === undefined ? undefined : request.receiveCount;
  const messageBack = count === undefined ? HOLDERS_MESSAGE_BACK : `(${HOLDERS_MESSAGE_BACK} AND ${LATER_DELIVERY})`;
  const takeover = messageId === undefined ? LEASE_LONG_EXPIRED : `(${LEASE_LONG_EXPIRED} OR ${messageBack})`;
  const claimable = `(${FIRST_ATTEMPT} OR ${RETRY_DUE} OR (${takeover} AND ${NOT_THIS_CLAIM}))`;
  return {
    UpdateExpression:
      [
        // Operands read the item as it was before this update: the status the claim took it from.
        'SET claimedFrom = #status',
        '#status = :running',
        'fence = if_not_exists(fence, :zero) + :one',
        '#owner = :owner',
        'leaseExpiresAt = leaseMs + :now',
        'attempts = if_not_exists(attempts, :zero) + :one',
        'startedAt = :now',
        'claimToken = :token',
        ...(messageId === undefined ? [] : ['leaseMessageId = :message']),
        ...(count === undefined ? [] : ['leaseReceiveCount = :receiveCount']),
      ].join(', ') +
      ` REMOVE nextAttemptAt${messageId === undefined ? ', leaseMessageId' : ''}${count === undefined ? ', leaseReceiveCount' : ''}`,
    ConditionExpression: run === undefined ? `${EXISTS} AND ${claimable}` : `${EXISTS} AND ${SAME_GENERATION} AND ${claimable}`,
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner', ...(run && { '#generation': 'generation' }) },
    ExpressionAttributeValues: {
      ...baseValues(request, token),
      ':zero': { N: '0' },
      ':enqueued': { S: SliceStatus.Enqueued },
      ':failed': { S: SliceStatus.Failed },
      ':expiredBefore': { N: String(now - LEASE_EXPIRY_MARGIN_MS) },
      ...(run && { ':generation': { N: String(run.generation) } }),
    },
  };
}

/** RE-CREATE: a new slice of `run`'s generation over an older generation's SKIPPED one. */
function recreateInput(request: ClaimRequest, run: SliceDefinition, token: string): ClaimInput {
  const { now, messageId } = request;
  const count = messageId === undefined ? undefined : request.receiveCount;
  const definition = definitionValues(run, now);
  const absent = [
    ...LAST_RUN_FIELDS,
    ...(run.payload === undefined ? ['#payload'] : []),
    ...(messageId === undefined ? ['leaseMessageId'] : []),
    ...(count === undefined ? ['leaseReceiveCount'] : []),
  ];
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
    ExpressionAttributeNames: {
      '#status': 'status',
      '#owner': 'owner',
      '#generation': 'generation',
      ...namesOf(definition),
      ...(run.payload === undefined && { '#payload': 'payload' }),
    },
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
    ...(request.messageId === undefined || request.receiveCount === undefined
      ? {}
      : { ':receiveCount': { N: String(request.receiveCount) } }),
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
