/**
 * The WheelStore port over DynamoDB: the `wheel` table, one partition per
 * shard (core/wheel.ts has the rules). Sort keys:
 *
 *   !aside#<jobId>       a job set aside (core/set-aside.ts): generation, reason, from, at, by
 *   !inbox#<jobId>       a generation no scan has taken up yet
 *   <bucket, 15 digits>#<tag>   a pack of wheel entries of that bucket: `jobs`, a JSON array of
 *                        [jobId, generation, from] (and sentAt, for one placed late: core/wheel.ts);
 *                        as many as fit one write unit (1 KB)
 *   ~cursor              scannedThrough, reconciledThrough
 *
 * ('!' sorts before the digits and '~' after them, so a bucket range query meets neither.)
 *
 * PLACE      BatchWriteItem of packs (no condition: a pack is new, its tag random; a
 *            pack written twice by a redone scan only repeats entries, which readers
 *            dedupe). TTL expiresAt = bucket + WHEEL_ENTRY_TTL_MS.
 * NEXT/AT    Query the shard's partition by sort key range, consistently.
 * INBOX PUT  PutItem; condition: NO_ENTRY OR OLDER_GENERATION (a change that lost a race
 *            never replaces a newer generation's entry). A failed condition: nothing to do.
 * INBOX TAKE DeleteItem; condition: generation = the one taken up (a newer put stays).
 * ASIDE PUT  PutItem; condition: NO_ENTRY OR NOT_NEWER (a later generation's record stays).
 * ASIDE LIST Query the shard's partition, begins_with !aside#, consistently.
 * CURSOR     UpdateItem SET both fields; condition: NO_CURSOR OR NOT_BEHIND (both fields
 *            only grow); a lost race is read again and retried with the larger values.
 *            Returns the item as written: the claim the scan then reads.
 * CLAIM      UpdateItem SET claimedThrough on the cursor item; condition: NO_CLAIM OR
 *            CLAIM_BEHIND (it only grows). A failed condition (a scan claimed further):
 *            nothing to do; the item comes back with the refusal.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type UpdateItemCommandInput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type { Random } from '../../core/backoff.ts';
import type { Clock } from '../../core/clock.ts';
import { CronfenceError } from '../../core/errors.ts';
import type { WheelStore } from '../../core/ports.ts';
import type { SetAsideJob } from '../../core/set-aside.ts';
import { WHEEL_ENTRY_TTL_MS, type PlacedEntry, type ScanCursor, type ShardCursor, type WheelEntry } from '../../core/wheel.ts';
import type { CronfenceConfig } from '../config.ts';
import { isConditionFailure, onTable, unprocessedBackoffMs } from './errors.ts';
import { fromItem, toItem } from './items.ts';
import { queryAll } from './read-pages.ts';

const INBOX_PREFIX = '!inbox#';
const ASIDE_PREFIX = '!aside#';
const CURSOR_KEY = '~cursor';
const BUCKET_DIGITS = 15;
/** A pack's `jobs` text stays under this, so the whole item (keys and TTL too) is one write unit. */
const PACK_BYTES = 900;
/** BatchWriteItem's limit. */
const WRITE_BATCH = 25;
const WRITE_TRIES = 6;

/** No inbox entry for this job yet. */
const NO_ENTRY = 'attribute_not_exists(generation)';
/** The inbox holds an older generation of this job. */
const OLDER_GENERATION = 'generation < :generation';
/** The record there is of this generation or an older one. */
const NOT_NEWER = 'generation <= :generation';
/** No cursor yet: the shard's first scan. */
const NO_CURSOR = 'attribute_not_exists(scannedThrough)';
/** Neither field would move back. */
const NOT_BEHIND = '(scannedThrough <= :scanned AND reconciledThrough <= :reconciled)';
/** No scan has claimed yet (or the cursor predates claims). */
const NO_CLAIM = 'attribute_not_exists(claimedThrough)';
/** The claim would grow. */
const CLAIM_BEHIND = 'claimedThrough < :through';

export class DynamoWheelStore implements WheelStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'wheelTable'>,
    /** Whose timers pace sending unprocessed items again. */
    private readonly clock: Clock,
    /** The jitter of sending unprocessed items again. */
    private readonly random: Random,
  ) {}

  async readCursor(shard: number): Promise<ShardCursor | undefined> {
    const result = await onTable(this.table, () =>
      this.dynamo.send(new GetItemCommand({ TableName: this.table, Key: this.key(shard, CURSOR_KEY), ConsistentRead: true })),
    );
    return cursorOf(result.Item);
  }

  async claim(shard: number, through: number): Promise<ShardCursor | undefined> {
    try {
      return await this.writeCursor(shard, {
        UpdateExpression: 'SET claimedThrough = :through',
        ConditionExpression: `${NO_CLAIM} OR ${CLAIM_BEHIND}`,
        ExpressionAttributeValues: { ':through': { N: String(through) } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // Claimed further already: the refusal carries the item (read it when an implementation leaves it out).
      return error.Item ? cursorOf(error.Item) : this.readCursor(shard);
    }
  }

  async moveCursor(shard: number, cursor: ScanCursor): Promise<ShardCursor> {
    let target = cursor;
    for (let tries = 1; ; tries++) {
      try {
        const moved = await this.writeCursor(shard, {
          UpdateExpression: 'SET scannedThrough = :scanned, reconciledThrough = :reconciled',
          ConditionExpression: `${NO_CURSOR} OR ${NOT_BEHIND}`,
          ExpressionAttributeValues: {
            ':scanned': { N: String(target.scannedThrough) },
            ':reconciled': { N: String(target.reconciledThrough) },
          },
        });
        if (moved === undefined) throw new CronfenceError(`moving the cursor of shard ${shard}: DynamoDB returned no item`);
        return moved;
      } catch (error) {
        if (!isConditionFailure(error) || tries >= WRITE_TRIES) throw error;
        // Another scan moved one field further: keep the larger of each.
        const current = await this.readCursor(shard);
        if (current === undefined) continue;
        const merged = {
          scannedThrough: Math.max(current.scannedThrough, target.scannedThrough),
          reconciledThrough: Math.max(current.reconciledThrough, target.reconciledThrough),
        };
        if (merged.scannedThrough === current.scannedThrough && merged.reconciledThrough === current.reconciledThrough) return current;
        target = merged;
      }
    }
  }

  async nextBucket(shard: number, fromMs: number, toMs: number): Promise<number | undefined> {
    if (fromMs >= toMs) return undefined;
    const result = await onTable(this.table, () =>
      this.dynamo.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#shard = :shard AND #entry BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#shard': 'shard', '#entry': 'entry' },
          // Every sort key of a bucket below `toMs` starts with its digits and sorts before this bound.
          ExpressionAttributeValues: {
            ':shard': { N: String(shard) },
            ':from': { S: bucketKey(fromMs) },
            ':to': { S: `${bucketKey(toMs - 1)}~` },
          },
          ProjectionExpression: '#entry',
          ConsistentRead: true,
          Limit: 1,
        }),
      ),
    );
    const first = result.Items?.[0];
    return first === undefined ? undefined : Number((fromItem(first).entry as string).slice(0, BUCKET_DIGITS));
  }

  async entriesAt(shard: number, bucket: number): Promise<PlacedEntry[]> {
    const items = await onTable(this.table, () =>
      queryAll(this.dynamo, {
        TableName: this.table,
        KeyConditionExpression: '#shard = :shard AND begins_with(#entry, :bucket)',
        ExpressionAttributeNames: { '#shard': 'shard', '#entry': 'entry' },
        ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':bucket': { S: `${bucketKey(bucket)}#` } },
        ConsistentRead: true,
      }),
    );
    return items.flatMap((item) => unpack(fromItem(item).jobs as string).map((entry) => ({ ...entry, bucket })));
  }

  async place(shard: number, entries: readonly PlacedEntry[], now: number): Promise<void> {
    if (entries.length === 0) return;
    const tag = randomUUID().slice(0, 8);
    const requests: WriteRequest[] = packs(entries).map((pack, index) => ({
      PutRequest: {
        Item: {
          shard: { N: String(shard) },
          entry: { S: `${bucketKey(pack.bucket)}#${tag}.${index}` },
          jobs: { S: pack.jobs },
          expiresAt: { N: String(Math.floor((pack.bucket + WHEEL_ENTRY_TTL_MS) / 1000)) },
        },
      },
    }));
    for (let i = 0; i < requests.length; i += WRITE_BATCH) await this.writeBatch(requests.slice(i, i + WRITE_BATCH), now);
  }

  async inbox(shard: number): Promise<WheelEntry[]> {
    const items = await onTable(this.table, () =>
      queryAll(this.dynamo, {
        TableName: this.table,
        KeyConditionExpression: '#shard = :shard AND begins_with(#entry, :inbox)',
        ExpressionAttributeNames: { '#shard': 'shard', '#entry': 'entry' },
        ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':inbox': { S: INBOX_PREFIX } },
        ConsistentRead: true,
      }),
    );
    return items.map((item) => {
      const raw = fromItem(item);
      return { jobId: raw.jobId as string, generation: raw.generation as number, from: raw.from as number };
    });
  }

  async putInbox(shard: number, entry: WheelEntry): Promise<void> {
    try {
      await onTable(this.table, () =>
        this.dynamo.send(
          new PutItemCommand({
            TableName: this.table,
            Item: {
              ...this.key(shard, `${INBOX_PREFIX}${entry.jobId}`),
              jobId: { S: entry.jobId },
              generation: { N: String(entry.generation) },
              from: { N: String(entry.from) },
            },
            ConditionExpression: `${NO_ENTRY} OR ${OLDER_GENERATION}`,
            ExpressionAttributeValues: { ':generation': { N: String(entry.generation) } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async takeFromInbox(shard: number, entry: WheelEntry): Promise<void> {
    try {
      await onTable(this.table, () =>
        this.dynamo.send(
          new DeleteItemCommand({
            TableName: this.table,
            Key: this.key(shard, `${INBOX_PREFIX}${entry.jobId}`),
            ConditionExpression: 'generation = :generation',
            ExpressionAttributeValues: { ':generation': { N: String(entry.generation) } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async setAside(shard: number, record: SetAsideJob): Promise<void> {
    try {
      await onTable(this.table, () =>
        this.dynamo.send(
          new PutItemCommand({
            TableName: this.table,
            Item: { ...toItem({ ...record }), ...this.key(shard, `${ASIDE_PREFIX}${record.jobId}`) },
            ConditionExpression: `${NO_ENTRY} OR ${NOT_NEWER}`,
            ExpressionAttributeValues: { ':generation': { N: String(record.generation) } },
          }),
        ),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async setAsideJobs(shard: number): Promise<SetAsideJob[]> {
    const items = await onTable(this.table, () =>
      queryAll(this.dynamo, {
        TableName: this.table,
        KeyConditionExpression: '#shard = :shard AND begins_with(#entry, :aside)',
        ExpressionAttributeNames: { '#shard': 'shard', '#entry': 'entry' },
        ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':aside': { S: ASIDE_PREFIX } },
        ConsistentRead: true,
      }),
    );
    return items.map((item) => {
      const raw = fromItem(item);
      return {
        jobId: raw.jobId as string,
        generation: raw.generation as number,
        reason: raw.reason as string,
        from: raw.from as number,
        at: raw.at as number,
        by: raw.by as string,
      };
    });
  }

  /** One conditional write of the shard's cursor item. @returns the item as written (undefined while it is a claim alone) */
  private async writeCursor(
    shard: number,
    update: Pick<
      UpdateItemCommandInput,
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues' | 'ReturnValuesOnConditionCheckFailure'
    >,
  ): Promise<ShardCursor | undefined> {
    const result = await onTable(this.table, () =>
      this.dynamo.send(
        new UpdateItemCommand({ TableName: this.table, Key: this.key(shard, CURSOR_KEY), ReturnValues: 'ALL_NEW', ...update }),
      ),
    );
    return cursorOf(result.Attributes);
  }

  /** Sends one batch until DynamoDB has taken every item (it may hand back unprocessed ones under load). */
  private async writeBatch(requests: WriteRequest[], now: number): Promise<void> {
    let pending = requests;
    for (let tries = 1; pending.length > 0; tries++) {
      if (tries > WRITE_TRIES)
        throw new CronfenceError(
          `placing wheel entries at ${now}: DynamoDB left ${pending.length} of ${requests.length} packs unprocessed after ${WRITE_TRIES} tries`,
        );
      if (tries > 1) await this.clock.sleep(unprocessedBackoffMs(tries, this.random));
      const batch = pending;
      const result = await onTable(this.table, () =>
        this.dynamo.send(new BatchWriteItemCommand({ RequestItems: { [this.table]: batch } })),
      );
      pending = result.UnprocessedItems?.[this.table] ?? [];
    }
  }

  private get table(): string {
    return this.config.wheelTable;
  }

  private key(shard: number, entry: string): Record<string, { N: string } | { S: string }> {
    return { shard: { N: String(shard) }, entry: { S: entry } };
  }
}

/** The cursor item's fields; undefined while no scan has moved it (a claim alone is no cursor). */
function cursorOf(item: Record<string, AttributeValue> | undefined): ShardCursor | undefined {
  if (item?.scannedThrough === undefined) return undefined;
  const raw = fromItem(item);
  const scannedThrough = raw.scannedThrough as number;
  // A cursor written before claims existed: its claim is where it has scanned to.
  return {
    scannedThrough,
    reconciledThrough: raw.reconciledThrough as number,
    claimedThrough: Math.max((raw.claimedThrough as number | undefined) ?? scannedThrough, scannedThrough),
  };
}

function bucketKey(instant: number): string {
  return String(Math.max(0, instant)).padStart(BUCKET_DIGITS, '0');
}

/** Entries grouped by bucket, each group cut into packs whose text fits one write unit. */
function packs(entries: readonly PlacedEntry[]): { bucket: number; jobs: string }[] {
  const byBucket = new Map<number, PlacedEntry[]>();
  for (const entry of entries) {
    const group = byBucket.get(entry.bucket);
    if (group) group.push(entry);
    else byBucket.set(entry.bucket, [entry]);
  }
  const out: { bucket: number; jobs: string }[] = [];
  for (const [bucket, group] of byBucket) {
    let current: string[] = [];
    let size = 2;
    for (const entry of group) {
      const text = JSON.stringify(
        entry.sentAt === undefined
          ? [entry.jobId, entry.generation, entry.from]
          : [entry.jobId, entry.generation, entry.from, entry.sentAt],
      );
      if (current.length > 0 && size + text.length + 1 > PACK_BYTES) {
        out.push({ bucket, jobs: `[${current.join(',')}]` });
        current = [];
        size = 2;
      }
      current.push(text);
      size += text.length + 1;
    }
    if (current.length > 0) out.push({ bucket, jobs: `[${current.join(',')}]` });
  }
  return out;
}

function unpack(jobs: string): (WheelEntry & { sentAt?: number })[] {
  return (JSON.parse(jobs) as [string, number, number, number?][]).map(([jobId, generation, from, sentAt]) => ({
    jobId,
    generation,
    from,
    ...(sentAt !== undefined && { sentAt }),
  }));
}
