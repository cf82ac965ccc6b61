/**
 * Where the dead-man's switch's round over the jobs table stands: one item in
 * the wheel table, under a shard no scanner has (-1), entry `~dead-man`:
 * `after` (the last job id judged; absent: the round starts at the table's
 * beginning) and `roundStartedAt` (when the current round began). Written
 * unconditionally: two watches running at once judge some jobs twice, which
 * is harmless (a second `stale` event for a stale job).
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { onTable } from './errors.ts';
import { fromItem, toItem, type Item } from './items.ts';

export const DEAD_MAN_CURSOR_SHARD = -1;
const ENTRY = '~dead-man';

export interface DeadManCursor {
  /** The jobs table's key after which the round goes on; undefined: from the beginning. */
  readonly after?: string;
  readonly roundStartedAt?: number;
}

const key = (): Item => ({ shard: { N: String(DEAD_MAN_CURSOR_SHARD) }, entry: { S: ENTRY } });

export async function readDeadManCursor(dynamo: DynamoDBClient, wheelTable: string): Promise<DeadManCursor> {
  const { Item: item } = await onTable(wheelTable, () =>
    dynamo.send(new GetItemCommand({ TableName: wheelTable, Key: key(), ConsistentRead: true })),
  );
  if (item === undefined) return {};
  const raw = fromItem(item);
  return {
    ...(typeof raw.after === 'string' && { after: raw.after }),
    ...(typeof raw.roundStartedAt === 'number' && { roundStartedAt: raw.roundStartedAt }),
  };
}

export async function writeDeadManCursor(dynamo: DynamoDBClient, wheelTable: string, cursor: DeadManCursor): Promise<void> {
  const item = { ...key(), ...toItem({ after: cursor.after, roundStartedAt: cursor.roundStartedAt }) };
  await onTable(wheelTable, () => dynamo.send(new PutItemCommand({ TableName: wheelTable, Item: item })));
}
