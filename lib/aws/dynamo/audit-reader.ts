/**
 * Reads the history `cronfence verify` audits (core/audit.ts) from an
 * installation's tables, every read consistent:
 *   0. effects (only when asked, `--effects`): a Scan of each business table
 *      named, for items stamped with an execution key and a fence;
 *   1. jobs: a Scan of the jobs table, tombstones included (GetItem with --job);
 *   2. job ids: a Scan of the slices table's keys in [since, until), for slices
 *      of a job with no item at all (O(table); skipped with --job);
 *   3. slices: one Query per job id over scheduledAt in [since, until); and the
 *      job's last slice before `since`, when it is a range record (MISSED, or
 *      SKIPPED by the misfire policy) reaching into the window. A SUCCEEDED
 *      or DEAD slice carries its ledger record (core/ledger.ts), so the
 *      ledger is what these slices say.
 * Business writes are in the commit's transaction with the slice, so a write
 * seen in step 0 has its slice final by step 3: an in-flight commit never
 * reads as a mismatch.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BusinessEffect } from '../../core/audit.ts';
import { CronfenceError, MissingResourceError } from '../../core/errors.ts';
import { parseExecutionKey } from '../../core/execution-key.ts';
import type { JobRecord } from '../../core/job-record.ts';
import type { Item } from './items.ts';
import { ledgerOfSlices, type LedgerRecord } from '../../core/ledger.ts';
import type { Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { onTable } from './errors.ts';
import { fromItem } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { readJobRow, readRows, readSliceRow, type UnreadableRow } from './stored-rows.ts';
import { mapBounded } from '../../core/map-bounded.ts';

const QUERY_CONCURRENCY = 8;

export type AuditTables = Pick<CronfenceConfig, 'jobsTable' | 'slicesTable'>;

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
  readonly phase: 'effects' | 'jobs' | 'keys' | 'slices';
  /** Items scanned (effects, jobs, keys: the slices table's keys) or job ids queried (slices), so far. */
  readonly done: number;
  /** Known for slices. */
  readonly total?: number;
}

export interface AuditHistory {
  readonly jobs: JobRecord[];
  readonly slices: Slice[];
  readonly ledger: LedgerRecord[];
  readonly effects: BusinessEffect[];
  /** Items of the effect tables without a parsable execution key or a numeric fence. */
  readonly unstampedEffects: number;
  /** Job and slice items that do not parse (stored-rows.ts): left out of the rest, reported by name. */
  readonly unreadable: UnreadableRow[];
}

export async function readAuditHistory(dynamo: DynamoDBClient, tables: AuditTables, request: AuditReadRequest): Promise<AuditHistory> {
  const progress = request.onProgress ?? (() => {});
  const effects = await readEffects(dynamo, request, (done) => progress({ phase: 'effects', done }));
  const jobRows = readRows(
    await readJobs(dynamo, tables.jobsTable, request.jobId, (done) => progress({ phase: 'jobs', done })),
    readJobRow,
  );
  const jobs = jobRows.rows;
  const orphans =
    request.jobId !== undefined
      ? []
      : await readSliceJobIds(dynamo, tables.slicesTable, request, (done) => progress({ phase: 'keys', done }));
  const jobIds =
    request.jobId !== undefined
      ? [request.jobId]
      : [...new Set([...jobs.map((job) => job.id), ...jobRows.unreadable.map((row) => row.jobId), ...orphans])].sort();
  let queried = 0;
  const perJob = await mapBounded(jobIds, QUERY_CONCURRENCY, async (jobId) => {
    const slices = await readSlices(dynamo, tables.slicesTable, jobId, request);
    progress({ phase: 'slices', done: ++queried, total: jobIds.length });
    return slices;
  });
  const sliceRows = readRows(perJob.flat(), readSliceRow);
  const slices = sliceRows.rows;
  const unreadable = [...jobRows.unreadable, ...sliceRows.unreadable];
  return { jobs, slices, ledger: ledgerOfSlices(slices), effects: effects.stamped, unstampedEffects: effects.unstamped, unreadable };
}

async function readEffects(
  dynamo: DynamoDBClient,
  request: AuditReadRequest,
  onPage: (scanned: number) => void,
): Promise<{ stamped: BusinessEffect[]; unstamped: number }> {
  const stamped: BusinessEffect[] = [];
  let unstamped = 0;
  for (const source of request.effects ?? []) {
    const keyAttribute = source.keyAttribute ?? 'executionKey';
    const fenceAttribute = source.fenceAttribute ?? 'fence';
    const items = await scanAll(
      dynamo,
      {
        TableName: source.table,
        ProjectionExpression: '#key, #fence',
        ExpressionAttributeNames: { '#key': keyAttribute, '#fence': fenceAttribute },
        ConsistentRead: true,
      },
      onPage,
    ).catch((error: unknown) => {
      // One of the user's own tables: bootstrap would not create it.
      if (error instanceof MissingResourceError)
        throw new CronfenceError(`business table ${JSON.stringify(source.table)} does not exist`, { cause: error });
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

async function readJobs(
  dynamo: DynamoDBClient,
  jobsTable: string,
  jobId: string | undefined,
  onPage: (scanned: number) => void,
): Promise<Item[]> {
  if (jobId === undefined) return scanAll(dynamo, { TableName: jobsTable, ConsistentRead: true }, onPage);
  const result = await onTable(jobsTable, () =>
    dynamo.send(new GetItemCommand({ TableName: jobsTable, Key: { jobId: { S: jobId } }, ConsistentRead: true })),
  );
  onPage(result.Item ? 1 : 0);
  return result.Item ? [result.Item] : [];
}

/** Job ids of the slices scheduled in the window (keys only). */
async function readSliceJobIds(
  dynamo: DynamoDBClient,
  slicesTable: string,
  request: AuditReadRequest,
  onPage: (scanned: number) => void,
): Promise<string[]> {
  const items = await scanAll(
    dynamo,
    {
      TableName: slicesTable,
      ProjectionExpression: 'jobId',
      FilterExpression: 'scheduledAt BETWEEN :since AND :last',
      ExpressionAttributeValues: { ':since': { N: String(request.since) }, ':last': { N: String(request.until - 1) } },
      ConsistentRead: true,
    },
    onPage,
  );
  return [...new Set(items.map((item) => fromItem(item).jobId as string))];
}

async function readSlices(dynamo: DynamoDBClient, slicesTable: string, jobId: string, request: AuditReadRequest): Promise<Item[]> {
  const [items, before] = await Promise.all([
    queryAll(dynamo, {
      TableName: slicesTable,
      KeyConditionExpression: 'jobId = :job AND scheduledAt BETWEEN :since AND :last',
      ExpressionAttributeValues: {
        ':job': { S: jobId },
        ':since': { N: String(request.since) },
        ':last': { N: String(request.until - 1) },
      },
      ConsistentRead: true,
    }),
    // A range record (MISSED, or SKIPPED by the misfire policy) is one item at its first occurrence: one that began
    // before the window still covers part of it.
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
  const reaching = before.filter((item) => Number(item.missedUntil?.N ?? 0) > request.since);
  return [...reaching, ...items];
}
