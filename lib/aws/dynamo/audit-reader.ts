/**
 * Reads the history `cronfence verify` audits (core/audit.ts) from an
 * installation's tables, every read consistent:
 *   0. effects (only when asked, `--effects`): a Scan of each business table
 *      named, for items stamped with an execution key and a fence;
 *   1. jobs: a Scan of the jobs table, tombstones included (GetItem with --job);
 *   2. ledger: a Scan filtered by scheduledAt in [since, until) (the ledger is
 *      keyed by execution key alone, so this reads the whole table: O(table));
 *   3. slices: one Query per job id (jobs, tombstones, and any job id the
 *      ledger names) over scheduledAt in [since, until); and the job's last
 *      slice before `since`, when it is a MISSED range reaching into the window;
 *   4. confirm: a SUCCEEDED or DEAD slice whose record step 2 did not see gets
 *      a GetItem of its ledger record.
 * The order is what makes a live installation safe to audit: a commit writes
 * slice and ledger in one transaction, so a record seen in step 2 has its
 * slice final by step 3, and a slice that became final after step 2 has its
 * record found in step 4; an in-flight commit never reads as a mismatch.
 * Business writes are in the same transaction, so a write seen in step 0 has
 * its ledger record by step 2.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BusinessEffect } from '../../core/audit.ts';
import { CronfenceError, MissingResourceError } from '../../core/errors.ts';
import { executionKey, parseExecutionKey } from '../../core/execution-key.ts';
import type { JobRecord } from '../../core/job-lifecycle.ts';
import type { LedgerRecord } from '../../core/ledger.ts';
import { SliceStatus, type Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { onTable } from './errors.ts';
import { fromItem, toJobRecord, toLedgerRecord, toSlice } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { mapBounded } from '../../core/map-bounded.ts';

const QUERY_CONCURRENCY = 8;

export type AuditTables = Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'ledgerTable'>;

export interface AuditReadRequest {
  /** Epoch ms, inclusive. */
  readonly since: number;
  /** Epoch ms, exclusive. */
  readonly until: number;
  /** Only this job (its tombstone included). */
  readonly jobId?: string;
  /** Business tables whose items carry the execution key and fence of the commit that wrote them. */
  readonly effects?: readonly EffectSource[];
  readonly onProgress?: (progress: AuditReadProgress) => void;
}

/** A business table written in commits, e.g. a payouts table keyed by execution key with a `fence` attribute. */
export interface EffectSource {
  readonly table: string;
  /** The attribute holding the execution key. @default "executionKey" */
  readonly keyAttribute?: string;
  /** The attribute holding the commit's fence (a number). @default "fence" */
  readonly fenceAttribute?: string;
}

export interface AuditReadProgress {
  readonly phase: 'effects' | 'jobs' | 'ledger' | 'slices' | 'confirm';
  /** Items scanned (effects, jobs, ledger) or job ids queried (slices) or records confirmed, so far. */
  readonly done: number;
  /** Known for slices and confirm. */
  readonly total?: number;
}

export interface AuditHistory {
  readonly jobs: JobRecord[];
  readonly slices: Slice[];
  readonly ledger: LedgerRecord[];
  readonly effects: BusinessEffect[];
  /** Items of the effect tables without a parsable execution key or a numeric fence. */
  readonly unstampedEffects: number;
}

export async function readAuditHistory(dynamo: DynamoDBClient, tables: AuditTables, request: AuditReadRequest): Promise<AuditHistory> {
  const progress = request.onProgress ?? (() => {});
  const effects = await readEffects(dynamo, request, (done) => progress({ phase: 'effects', done }));
  const jobs = await readJobs(dynamo, tables.jobsTable, request.jobId, (done) => progress({ phase: 'jobs', done }));
  const ledger = await readLedger(dynamo, tables.ledgerTable, request, (done) => progress({ phase: 'ledger', done }));
  const jobIds = request.jobId !== undefined ? [request.jobId] : [...new Set([...jobs.map((job) => job.id), ...ledger.map((record) => record.jobId)])].sort();
  let queried = 0;
  const perJob = await mapBounded(jobIds, QUERY_CONCURRENCY, async (jobId) => {
    const slices = await readSlices(dynamo, tables.slicesTable, jobId, request);
    progress({ phase: 'slices', done: ++queried, total: jobIds.length });
    return slices;
  });
  const slices = perJob.flat();
  const confirmed = await confirmLedger(dynamo, tables.ledgerTable, slices, ledger, progress);
  return { jobs, slices, ledger: [...ledger, ...confirmed], effects: effects.stamped, unstampedEffects: effects.unstamped };
}

async function readEffects(dynamo: DynamoDBClient, request: AuditReadRequest, onPage: (scanned: number) => void): Promise<{ stamped: BusinessEffect[]; unstamped: number }> {
  const stamped: BusinessEffect[] = [];
  let unstamped = 0;
  for (const source of request.effects ?? []) {
    const keyAttribute = source.keyAttribute ?? 'executionKey';
    const fenceAttribute = source.fenceAttribute ?? 'fence';
    const items = await scanAll(
      dynamo,
      { TableName: source.table, ProjectionExpression: '#key, #fence', ExpressionAttributeNames: { '#key': keyAttribute, '#fence': fenceAttribute }, ConsistentRead: true },
      onPage,
    ).catch((error: unknown) => {
      // One of the user's own tables: bootstrap would not create it.
      if (error instanceof MissingResourceError) throw new CronfenceError(`business table ${JSON.stringify(source.table)} does not exist`, { cause: error });
      throw error;
    });
    for (const item of items) {
      const raw = fromItem(item);
      const key = raw[keyAttribute];
      const parsed = typeof key === 'string' ? parseExecutionKey(key) : undefined;
      if (parsed === undefined || typeof raw[fenceAttribute] !== 'number') {
        unstamped++;
        continue;
      }
      const inWindow = parsed.scheduledAt >= request.since && parsed.scheduledAt < request.until;
      if (inWindow && (request.jobId === undefined || parsed.jobId === request.jobId)) {
        stamped.push({ executionKey: key as string, fence: raw[fenceAttribute], source: source.table });
      }
    }
  }
  return { stamped, unstamped };
}

async function readJobs(dynamo: DynamoDBClient, jobsTable: string, jobId: string | undefined, onPage: (scanned: number) => void): Promise<JobRecord[]> {
  if (jobId === undefined) return (await scanAll(dynamo, { TableName: jobsTable, ConsistentRead: true }, onPage)).map(toJobRecord);
  const result = await onTable(jobsTable, () =>
    dynamo.send(new GetItemCommand({ TableName: jobsTable, Key: { jobId: { S: jobId } }, ConsistentRead: true })),
  );
  onPage(result.Item ? 1 : 0);
  return result.Item ? [toJobRecord(result.Item)] : [];
}

async function readLedger(dynamo: DynamoDBClient, ledgerTable: string, request: AuditReadRequest, onPage: (scanned: number) => void): Promise<LedgerRecord[]> {
  const byJob = request.jobId !== undefined;
  const items = await scanAll(
    dynamo,
    {
      TableName: ledgerTable,
      FilterExpression: `scheduledAt BETWEEN :since AND :last${byJob ? ' AND jobId = :job' : ''}`,
      ExpressionAttributeValues: {
        ':since': { N: String(request.since) },
        ':last': { N: String(request.until - 1) },
        ...(byJob ? { ':job': { S: request.jobId as string } } : {}),
      },
      ConsistentRead: true,
    },
    onPage,
  );
  return items.map(toLedgerRecord);
}

async function readSlices(dynamo: DynamoDBClient, slicesTable: string, jobId: string, request: AuditReadRequest): Promise<Slice[]> {
  const [items, before] = await Promise.all([
    queryAll(dynamo, {
      TableName: slicesTable,
      KeyConditionExpression: 'jobId = :job AND scheduledAt BETWEEN :since AND :last',
      ExpressionAttributeValues: { ':job': { S: jobId }, ':since': { N: String(request.since) }, ':last': { N: String(request.until - 1) } },
      ConsistentRead: true,
    }),
    // A MISSED range is one item at its first occurrence: one that began before the window still covers part of it.
    queryAll(
      dynamo,
      {
        TableName: slicesTable,
        KeyConditionExpression: 'jobId = :job AND scheduledAt < :since',
        ExpressionAttributeValues: { ':job': { S: jobId }, ':since': { N: String(request.since) } },
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      1,
    ),
  ]);
  const reaching = before.map(toSlice).filter((slice) => slice.status === SliceStatus.Missed && (slice.missedUntil ?? 0) > request.since);
  return [...reaching, ...items.map(toSlice)];
}

/** Ledger records of slices that reached SUCCEEDED or DEAD after the ledger scan passed them by. */
async function confirmLedger(
  dynamo: DynamoDBClient,
  ledgerTable: string,
  slices: readonly Slice[],
  ledger: readonly LedgerRecord[],
  progress: (progress: AuditReadProgress) => void,
): Promise<LedgerRecord[]> {
  const seen = new Set(ledger.map((record) => record.executionKey));
  const unseen = slices
    .filter((slice) => slice.status === SliceStatus.Succeeded || slice.status === SliceStatus.Dead)
    .map((slice) => executionKey(slice.jobId, slice.scheduledAt))
    .filter((key) => !seen.has(key));
  let done = 0;
  const found = await mapBounded(unseen, QUERY_CONCURRENCY, async (key) => {
    const result = await onTable(ledgerTable, () =>
      dynamo.send(new GetItemCommand({ TableName: ledgerTable, Key: { executionKey: { S: key } }, ConsistentRead: true })),
    );
    progress({ phase: 'confirm', done: ++done, total: unseen.length });
    return result.Item ? [toLedgerRecord(result.Item)] : [];
  });
  return found.flat();
}
