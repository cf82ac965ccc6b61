/**
 * Query and Scan, page after page, until done or `limit` items: the one
 * pagination loop the readers share.
 */
import {
  QueryCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/client-dynamodb';
import { onTable } from './errors.ts';

type Item = Record<string, AttributeValue>;

export async function queryAll(dynamo: DynamoDBClient, input: QueryCommandInput, limit = Number.POSITIVE_INFINITY): Promise<Item[]> {
  return readPages(input.TableName ?? '', limit, (startKey, pageLimit) =>
    dynamo.send(new QueryCommand({ ...input, ExclusiveStartKey: startKey, Limit: pageLimit })),
  );
}

/** @param onPage told after each page how many items the scan has read so far (a long scan's progress). */
export async function scanAll(dynamo: DynamoDBClient, input: ScanCommandInput, onPage?: (scanned: number) => void): Promise<Item[]> {
  let scanned = 0;
  return readPages(input.TableName ?? '', Number.POSITIVE_INFINITY, async (startKey) => {
    const page = await dynamo.send(new ScanCommand({ ...input, ExclusiveStartKey: startKey }));
    scanned += page.ScannedCount ?? page.Items?.length ?? 0;
    onPage?.(scanned);
    return page;
  });
}

async function readPages(
  tableName: string,
  limit: number,
  readPage: (startKey: Item | undefined, pageLimit: number | undefined) => Promise<{ Items?: Item[]; LastEvaluatedKey?: Item }>,
): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const remaining = Number.isFinite(limit) ? limit - items.length : undefined;
    const page = await onTable(tableName, () => readPage(startKey, remaining));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length < limit);
  return items;
}
