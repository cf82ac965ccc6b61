/**
 * Least privilege, one function per role, listed from the SDK calls each
 * role makes (lib/aws/dynamo/*.ts, lib/aws/sqs/*.ts). A TransactWriteItems
 * call is authorised item by item, so it needs the item actions it contains.
 * Consuming a queue (ReceiveMessage, DeleteMessage, ChangeMessageVisibility,
 * GetQueueAttributes, GetQueueUrl) is granted by the SQS event source.
 *
 * tick     SendMessage(scan); the dead-man's switch (dead-man-watch.ts): Scan(jobs) a bounded page, BatchGetItem and
 *          Query(slices), GetItem and PutItem(wheel) its cursor item, PutEvents
 * scanner  GetItem, Query, PutItem, UpdateItem, DeleteItem, BatchWriteItem(wheel) — wheel-store.ts
 *          BatchGetItem(jobs), Scan(jobs) a shard's first scan — job-reader.ts
 *          Query(slices), UpdateItem(slices): the reconciler, range records — reconcile-ops.ts, create-slices.ts
 *          Query(slices/index/sweep), UpdateItem(slices) — sweep.ts
 *          SendMessage(work) occurrences and swept slices; SendMessage(scan) re-queue an
 *          unfinished shard; SendMessage(dlq) unreadable messages; PutEvents (missed)
 * worker   PutItem(slices) the claim that creates the slice; UpdateItem(slices) claim of an existing one,
 *          renew, failure, skip; GetItem(slices) lost claim — claim-slice.ts;
 *          GetItem(jobs): has the job moved on since the message was sent
 *          UpdateItem(slices), or TransactWriteItems: UpdateItem(slices) + the
 *          business writes — finalize-slice.ts; SendMessage(dlq); PutEvents
 *          GetItem, PutItem(jobs), Query(slices, slices/index/sweep), Query, PutItem, DeleteItem(wheel): a
 *          one-time job with afterOneTime 'delete' deleted after its run — job-store.ts, job-change.ts;
 *          Query(slices), UpdateItem(slices): the overlap policy — overlap-ops.ts
 *          TransactWriteItems: ConditionCheckItem(slices) + PutItem(chunks) — commit-chunk.ts;
 *          Query, GetItem(chunks) — chunk-store.ts (checkpoint, own-chunk check)
 *          DescribeTable(slices, chunks): naming the table a transaction found missing — errors.ts onTables
 *          + the business tables granted with grantCommit (their writes and DescribeTable)
 * jobs     GetItem, PutItem(jobs) — job-reader.ts, job-change.ts (a delete is a tombstone put); in one TransactWriteItems with the
 *          job, PutItem(wheel) the new generation's inbox entry and the settle record, Query and DeleteItem(wheel) to
 *          finish it — job-change.ts; Query(slices, slices/index/sweep), UpdateItem(slices) — settle-pending-slices.ts
 *          (Update and Delete), create-slices.ts (SETTLE)
 *
 * test/artifacts/lambda-bundles.test.ts proves this list from the calls the bundles make.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { CHUNKS_TABLE, SLICES_TABLE } from '../aws/schema.ts';

export interface SchedulerResources {
  readonly jobs: dynamodb.ITable;
  readonly wheel: dynamodb.ITable;
  readonly slices: dynamodb.ITable;
  readonly chunks: dynamodb.ITable;
  readonly workQueue: sqs.IQueue;
  readonly scanQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly bus: events.IEventBus;
  readonly encryptionKey?: kms.IKey;
}

/** DynamoDB with a customer managed key (read and write through the key). */
const DYNAMO_KMS_ACTIONS = ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'];
/** Sending to an SQS queue encrypted with a customer managed key. */
const SQS_SEND_KMS_ACTIONS = ['kms:Decrypt', 'kms:GenerateDataKey'];

function allow(grantee: iam.IGrantable, actions: string[], resources: string[]): void {
  grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ effect: iam.Effect.ALLOW, actions, resources }));
}

function indexArn(table: dynamodb.ITable, indexName: string): string {
  return `${table.tableArn}/index/${indexName}`;
}

function sweepIndex(): string {
  const index = SLICES_TABLE.globalSecondaryIndexes[0];
  if (!index) throw new Error('schema: the slices table has no "sweep" index');
  return index.indexName;
}

function sendTo(grantee: iam.IGrantable, r: SchedulerResources, queues: sqs.IQueue[]): void {
  allow(
    grantee,
    ['sqs:SendMessage'],
    queues.map((queue) => queue.queueArn),
  );
  if (r.encryptionKey) allow(grantee, SQS_SEND_KMS_ACTIONS, [r.encryptionKey.keyArn]);
}

function useTableKey(grantee: iam.IGrantable, r: SchedulerResources): void {
  if (r.encryptionKey) allow(grantee, DYNAMO_KMS_ACTIONS, [r.encryptionKey.keyArn]);
}

export function grantTick(grantee: iam.IGrantable, r: SchedulerResources): void {
  sendTo(grantee, r, [r.scanQueue]);
  // The dead-man's switch: a page of jobs, their probes and histories, its cursor, and its `stale` events.
  allow(grantee, ['dynamodb:Scan'], [r.jobs.tableArn]);
  allow(grantee, ['dynamodb:BatchGetItem', 'dynamodb:Query'], [r.slices.tableArn]);
  allow(grantee, ['dynamodb:GetItem', 'dynamodb:PutItem'], [r.wheel.tableArn]);
  useTableKey(grantee, r);
  r.bus.grantPutEventsTo(grantee);
}

export function grantScanner(grantee: iam.IGrantable, r: SchedulerResources): void {
  allow(
    grantee,
    ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
    [r.wheel.tableArn],
  );
  allow(grantee, ['dynamodb:BatchGetItem', 'dynamodb:Scan'], [r.jobs.tableArn]);
  allow(grantee, ['dynamodb:Query', 'dynamodb:UpdateItem'], [r.slices.tableArn]);
  allow(grantee, ['dynamodb:Query'], [indexArn(r.slices, sweepIndex())]);
  useTableKey(grantee, r);
  sendTo(grantee, r, [r.workQueue, r.scanQueue, r.deadLetterQueue]);
  r.bus.grantPutEventsTo(grantee);
}

export function grantWorker(grantee: iam.IGrantable, r: SchedulerResources): void {
  // The claim that creates its slice is a conditional put (claim-slice.ts); every other slice transition is an update.
  allow(grantee, ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], [r.slices.tableArn]);
  // The check around a claim (has the job moved on?; a batch's checks share one BatchGetItem: coalesced-job-reader.ts),
  // and a one-time job deleting itself after its run (JobRepository.deleteAfterRun: the change and its settle).
  allow(grantee, ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem'], [r.jobs.tableArn]);
  // The same change's settle record on the wheel, written with the job and removed once settled (job-change.ts).
  allow(grantee, ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:DeleteItem'], [r.wheel.tableArn]);
  // The same, and the overlap policy's read of a job's recent slices (overlap-ops.ts).
  allow(grantee, ['dynamodb:Query'], [r.slices.tableArn, indexArn(r.slices, sweepIndex())]);
  // Chunked commits (commit-chunk.ts, chunk-store.ts): the fence check on the slice, the chunk and outbox puts, the checkpoint read.
  allow(grantee, ['dynamodb:ConditionCheckItem'], [r.slices.tableArn]);
  allow(grantee, ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'], [r.chunks.tableArn]);
  // A commit that finds a table missing names it (errors.ts onTables): the tables of its transactions.
  allow(grantee, ['dynamodb:DescribeTable'], [r.slices.tableArn, r.chunks.tableArn]);
  useTableKey(grantee, r);
  sendTo(grantee, r, [r.deadLetterQueue]);
  r.bus.grantPutEventsTo(grantee);
}

/**
 * The outbox dispatcher (outbox-store.ts): due requests from the outbox
 * index, take and record (UpdateItem) on the chunks table, dead-letter what
 * keeps failing.
 */
export function grantOutboxDispatcher(grantee: iam.IGrantable, r: SchedulerResources): void {
  allow(grantee, ['dynamodb:Query'], [indexArn(r.chunks, outboxIndex())]);
  allow(grantee, ['dynamodb:UpdateItem'], [r.chunks.tableArn]);
  useTableKey(grantee, r);
  sendTo(grantee, r, [r.deadLetterQueue]);
}

function outboxIndex(): string {
  const index = CHUNKS_TABLE.globalSecondaryIndexes[0];
  if (!index) throw new Error('schema: the chunks table has no "outbox" index');
  return index.indexName;
}

export function grantJobsResource(grantee: iam.IGrantable, r: SchedulerResources): void {
  // A delete is a tombstone put (job-change.ts): no DeleteItem.
  allow(grantee, ['dynamodb:GetItem', 'dynamodb:PutItem'], [r.jobs.tableArn]);
  // One transaction with the job: the inbox entry and the settle record; the settle record found and removed after.
  allow(grantee, ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:DeleteItem'], [r.wheel.tableArn]);
  allow(grantee, ['dynamodb:Query', 'dynamodb:UpdateItem'], [r.slices.tableArn]);
  // An Update or Delete settles the ended generation's older pending slices, found on the sweep index.
  allow(grantee, ['dynamodb:Query'], [indexArn(r.slices, sweepIndex())]);
  useTableKey(grantee, r);
}

/**
 * What `ctx.commit(writes)` may do to a business table inside the commit
 * transaction: put, update, delete and condition-check items.
 */
export const BUSINESS_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'];

export function grantBusinessWrites(grantee: iam.IGrantable, table: dynamodb.ITable): void {
  allow(grantee, BUSINESS_WRITE_ACTIONS, [table.tableArn]);
  // A commit that finds the table gone names it (errors.ts onTables) instead of failing with AccessDenied.
  allow(grantee, ['dynamodb:DescribeTable'], [table.tableArn]);
  if (table.encryptionKey) allow(grantee, DYNAMO_KMS_ACTIONS, [table.encryptionKey.keyArn]);
}
