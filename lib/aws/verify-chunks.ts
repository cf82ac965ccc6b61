/**
 * `cronfence verify`'s read of the chunks table: every chunk record and
 * outbox item of executions scheduled in [since, until) (one Scan, an
 * operator path), and their slices (GetItem each), audited by
 * core/chunk-audit.ts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { auditChunks, type ChunkAuditReport } from '../core/chunk-audit.ts';
import type { ChunkRecord, OutboxItem } from '../core/chunks.ts';
import { parseExecutionKey } from '../core/execution-key.ts';
import type { Slice } from '../core/slice.ts';
import type { CronfenceConfig } from './config.ts';
import { toChunkRecord, toOutboxItem } from './dynamo/chunk-items.ts';
import { readSlice } from './dynamo/claim-slice.ts';
import { scanAll } from './dynamo/read-pages.ts';

export interface VerifyChunksRequest {
  readonly since: number;
  readonly until: number;
  readonly jobId?: string;
  readonly now: number;
  readonly graceMs: number;
}

export async function verifyChunks(
  dynamo: DynamoDBClient,
  config: Pick<CronfenceConfig, 'slicesTable' | 'chunksTable'>,
  request: VerifyChunksRequest,
): Promise<ChunkAuditReport> {
  const items = await scanAll(dynamo, { TableName: config.chunksTable, ConsistentRead: true });
  const chunks: ChunkRecord[] = [];
  const outbox: OutboxItem[] = [];
  const inWindow = (key: string): boolean => {
    const slice = parseExecutionKey(key);
    return (
      slice !== undefined &&
      slice.scheduledAt >= request.since &&
      slice.scheduledAt < request.until &&
      (request.jobId === undefined || slice.jobId === request.jobId)
    );
  };
  for (const item of items) {
    const key = item.executionKey?.S ?? '';
    if (!inWindow(key)) continue;
    if (item.item?.S?.startsWith('chunk#')) chunks.push(toChunkRecord(item));
    else outbox.push(toOutboxItem(item));
  }
  const keys = new Set([...chunks, ...outbox].map((record) => record.executionKey));
  const slices: Slice[] = [];
  for (const key of keys) {
    const slice = await readSlice(dynamo, config.slicesTable, parseExecutionKey(key)!);
    if (slice !== undefined) slices.push(slice);
  }
  return auditChunks({ chunks, outbox, slices, now: request.now, graceMs: request.graceMs });
}
