/**
 * The dead-man's switch's reads of the slices table (lib/aws/dead-man-watch.ts):
 * - `latestFinalAmong`: BatchGetItem of given slice keys (100 a request,
 *   projected to key and status, eventually consistent): per job, the
 *   latest of them that is final. Many jobs' probes share one request.
 * - `latestFinalSince`: one job's slices from an instant on, newest first,
 *   stopping at the first final one: the exact read, for a job none of
 *   whose probes is final.
 * A range record (MISSED after an outage, or SKIPPED by the misfire policy)
 * stands for every occurrence up to its `missedUntil`: it counts as final at
 * the last instant it covers.
 */
import { BatchGetItemCommand, QueryCommand, type DynamoDBClient, type KeysAndAttributes } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../core/clock.ts';
import { isFinal, type SliceKey, type SliceStatus } from '../../core/slice.ts';
import { onTable } from './errors.ts';
import { fromItem, sliceKeyItem, type Item } from './items.ts';

/** BatchGetItem's ceiling. */
const KEYS_PER_BATCH = 100;
/** Rounds for keys DynamoDB left unprocessed (throttled) before the read gives up on them. */
const UNPROCESSED_ROUNDS = 6;
const PAGE = 25;

export interface SliceReads {
  /** Requests sent (each BatchGetItem and Query counts one). */
  requests: number;
}

/** Per job, the latest scheduled time among `keys` whose slice is final (jobs with none are absent). */
export async function latestFinalAmong(
  dynamo: DynamoDBClient,
  slicesTable: string,
  keys: readonly SliceKey[],
  reads: SliceReads,
  clock: Clock,
): Promise<Map<string, number>> {
  const latest = new Map<string, number>();
  for (let start = 0; start < keys.length; start += KEYS_PER_BATCH) {
    let pending: KeysAndAttributes | undefined = {
      Keys: keys.slice(start, start + KEYS_PER_BATCH).map(sliceKeyItem),
      ProjectionExpression: 'jobId, scheduledAt, #status, missedUntil',
      ExpressionAttributeNames: { '#status': 'status' },
    };
    for (let round = 0; pending !== undefined && round < UNPROCESSED_ROUNDS; round++) {
      if (round > 0) await clock.sleep(50 * 2 ** round);
      const request: KeysAndAttributes = pending;
      reads.requests++;
      const result = await onTable(slicesTable, () => dynamo.send(new BatchGetItemCommand({ RequestItems: { [slicesTable]: request } })));
      for (const item of result.Responses?.[slicesTable] ?? []) noteFinal(latest, item);
      const left = result.UnprocessedKeys?.[slicesTable];
      pending = left?.Keys !== undefined && left.Keys.length > 0 ? left : undefined;
    }
  }
  return latest;
}

/** Scheduled time of the job's latest final slot at or after `from`, if any. */
export async function latestFinalSince(
  dynamo: DynamoDBClient,
  slicesTable: string,
  jobId: string,
  from: number,
  reads: SliceReads,
): Promise<number | undefined> {
  let start: Item | undefined;
  do {
    reads.requests++;
    const page = await onTable(slicesTable, () =>
      dynamo.send(
        new QueryCommand({
          TableName: slicesTable,
          KeyConditionExpression: 'jobId = :job AND scheduledAt >= :from',
          ExpressionAttributeNames: { '#status': 'status' },
          // From 0 at least: an operator's request markers sit at negative instants.
          ExpressionAttributeValues: { ':job': { S: jobId }, ':from': { N: String(Math.max(0, from)) } },
          ProjectionExpression: 'scheduledAt, #status, missedUntil',
          ScanIndexForward: false,
          Limit: PAGE,
          ExclusiveStartKey: start,
        }),
      ),
    );
    const final = (page.Items ?? [])
      .map(fromItem)
      .find((item) => isFinal(item.status as SliceStatus) && typeof item.scheduledAt === 'number');
    if (final !== undefined) return finalAt(final);
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return undefined;
}

function noteFinal(latest: Map<string, number>, item: Item): void {
  const raw = fromItem(item);
  if (typeof raw.jobId !== 'string' || typeof raw.scheduledAt !== 'number' || !isFinal(raw.status as SliceStatus)) return;
  latest.set(raw.jobId, Math.max(latest.get(raw.jobId) ?? Number.NEGATIVE_INFINITY, finalAt(raw)));
}

/** The last instant a final item stands for: its own, or a range record's last covered one. */
function finalAt(raw: Record<string, unknown>): number {
  const at = raw.scheduledAt as number;
  return typeof raw.missedUntil === 'number' && raw.missedUntil > at ? raw.missedUntil - 1 : at;
}
