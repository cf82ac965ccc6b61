import { describe, expect, it } from 'vitest';
import { RequestMeter } from '../../tools/meter/request-meter.ts';
import {
  indexWritesForPut,
  indexWritesForUpdate,
  itemBytes,
  numberBytes,
  readRequestUnits,
  updatedAttributes,
  writeRequestUnits,
  type IndexShape,
} from '../../tools/meter/request-units.ts';

const SWEEP: IndexShape = { indexName: 'sweep', keyAttributes: ['sweepShard', 'sweepAt'], projected: ['status', 'scanId'] };

describe('item size by AWS rules', () => {
  it('counts attribute names and values', () => {
    expect(itemBytes({ id: { S: 'abc' } })).toBe(5); // "id" 2 + "abc" 3
    expect(itemBytes({ ok: { BOOL: true } })).toBe(3);
    expect(itemBytes({ m: { M: { a: { S: 'xy' } } } })).toBe(8); // "m" 1 + map 3 + ("a" 1 + "xy" 2 + 1)
    expect(itemBytes({ l: { L: [{ S: 'ab' }, { S: 'c' }] } })).toBe(9); // "l" 1 + list 3 + (2 + 1) + (1 + 1)
  });

  it('sizes numbers at one byte per two significant digits plus one', () => {
    expect(numberBytes('12345')).toBe(4);
    expect(numberBytes('1000')).toBe(2); // trailing zeros trimmed
    expect(numberBytes('-0.5')).toBe(2);
    expect(numberBytes('1764400000000')).toBe(4); // "17644" → 3 + 1
  });
});

describe('request units', () => {
  it('writes: one unit per started KB, at least one, doubled in a transaction', () => {
    expect(writeRequestUnits(0)).toBe(1);
    expect(writeRequestUnits(1024)).toBe(1);
    expect(writeRequestUnits(1025)).toBe(2);
    expect(writeRequestUnits(1025, { transactional: true })).toBe(4);
    expect(writeRequestUnits(600, { transactional: true })).toBe(2);
  });

  it('reads: one unit per started 4 KB strongly consistent, half eventually, double transactional', () => {
    expect(readRequestUnits(4096, 'strong')).toBe(1);
    expect(readRequestUnits(4097, 'strong')).toBe(2);
    expect(readRequestUnits(4097, 'eventual')).toBe(1);
    expect(readRequestUnits(0, 'eventual')).toBe(0.5);
    expect(readRequestUnits(100, 'transactional')).toBe(2);
  });
});

describe('index writes', () => {
  it('reads the attributes an update expression sets and removes', () => {
    expect(
      updatedAttributes('SET #status = :running, fence = fence + :one, #owner = :owner REMOVE nextAttemptAt, leaseMessageId', {
        '#status': 'status',
        '#owner': 'owner',
      }),
    ).toEqual({ set: ['status', 'fence', 'owner'], removed: ['nextAttemptAt', 'leaseMessageId'] });
    expect(updatedAttributes('SET a = if_not_exists(a, :zero), b = :b')).toEqual({ set: ['a', 'b'], removed: [] });
  });

  it('costs two for a key change, one for entering, leaving or a projected change, none otherwise', () => {
    expect(indexWritesForUpdate({ set: ['status', 'sweepAt'], removed: [] }, SWEEP, 80, true)).toBe(2); // claim
    expect(indexWritesForUpdate({ set: ['status'], removed: ['sweepShard', 'sweepAt'] }, SWEEP, 80, true)).toBe(1); // commit
    expect(indexWritesForUpdate({ set: ['leaseExpiresAt'], removed: [] }, SWEEP, 80, true)).toBe(0); // renewal
    expect(indexWritesForUpdate({ set: ['status'], removed: [] }, SWEEP, 80, true)).toBe(1);
    expect(indexWritesForUpdate({ set: ['sweepShard', 'sweepAt'], removed: [] }, SWEEP, 80, false)).toBe(1);
    expect(indexWritesForPut({ jobId: { S: 'j' }, sweepShard: { N: '1' }, sweepAt: { N: '5' } }, SWEEP, ['jobId'])).toBe(1);
    expect(indexWritesForPut({ jobId: { S: 'j' } }, SWEEP, ['jobId'])).toBe(0);
  });
});

describe('RequestMeter', () => {
  const config = { jobsTable: 'p-jobs', slicesTable: 'p-slices' };

  it('counts a transaction, a renewal learned from a claim, and an index query', () => {
    const meter = new RequestMeter(config);
    const slice = { jobId: { S: 'j' }, scheduledAt: { N: '1000' }, status: { S: 'ENQUEUED' }, sweepShard: { N: '0' }, sweepAt: { N: '5' } };
    meter.record(
      'dynamo',
      'TransactWriteItems',
      {
        TransactItems: [
          { Put: { TableName: 'p-slices', Item: slice } },
          { Put: { TableName: 'p-ledger', Item: { executionKey: { S: 'k' } } } },
        ],
      },
      {},
      undefined,
    );
    meter.record(
      'dynamo',
      'UpdateItem',
      { TableName: 'p-slices', Key: { jobId: { S: 'j' }, scheduledAt: { N: '1000' } }, UpdateExpression: 'SET leaseExpiresAt = :expires' },
      {},
      undefined,
    );
    meter.record(
      'dynamo',
      'Query',
      { TableName: 'p-jobs', IndexName: 'due' },
      { Items: [{ jobId: { S: 'a' } }, { jobId: { S: 'b' } }] },
      undefined,
    );
    meter.record('sqs', 'ReceiveMessage', {}, { Messages: [] }, undefined);
    meter.record('sqs', 'ReceiveMessage', {}, { Messages: [{}, {}] }, undefined);
    const m = meter.snapshot();
    expect(m.kinds.dynamoTransactWrite).toBe(1);
    expect(m.transactItems).toBe(2);
    expect(m.writeUnits.dynamoTransactWrite).toBe(4); // two items under 1 KB, transactional
    expect(m.kinds.heartbeat).toBe(1);
    expect(m.writeUnits.heartbeat).toBe(1);
    expect(m.itemsRead).toBe(2);
    expect(m.readUnits.dynamoRead).toBe(0.5);
    expect(m.indexWriteUnits).toEqual({ 'slices/sweep': 1 });
    expect(m.kinds.sqsReceive).toBe(1);
    expect(m.kinds.sqsReceiveEmpty).toBe(1);
    expect(m.sqsMessagesReceived).toBe(2);
  });

  it('charges no index write for a commit that removes the sweep keys of a slice its claim created outside the index, and one for a slice that was in it', () => {
    const meter = new RequestMeter(config);
    const key = (at: string) => ({ jobId: { S: 'j' }, scheduledAt: { N: at } });
    const commit = (at: string) => ({
      TableName: 'p-slices',
      Key: key(at),
      UpdateExpression: 'SET #status = :succeeded REMOVE sweepShard, sweepAt',
      ExpressionAttributeNames: { '#status': 'status' },
    });
    // Claims that created the slice (ALL_NEW): no sweep keys.
    meter.record(
      'dynamo',
      'UpdateItem',
      {
        TableName: 'p-slices',
        Key: key('1000'),
        UpdateExpression: 'SET #status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
      },
      { Attributes: { ...key('1000'), status: { S: 'RUNNING' } } },
      undefined,
    );
    meter.record('dynamo', 'UpdateItem', commit('1000'), {}, undefined);
    expect(meter.snapshot().indexWriteUnits).toEqual({});
    // A slice the claim found in the sweep index (a retry): its commit takes it out, one index write.
    meter.record(
      'dynamo',
      'UpdateItem',
      {
        TableName: 'p-slices',
        Key: key('2000'),
        UpdateExpression: 'SET #status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
      },
      { Attributes: { ...key('2000'), status: { S: 'RUNNING' }, sweepShard: { N: '0' }, sweepAt: { N: '5' } } },
      undefined,
    );
    meter.record('dynamo', 'UpdateItem', commit('2000'), {}, undefined);
    expect(meter.snapshot().indexWriteUnits).toEqual({ 'slices/sweep': 1 });
  });

  it('counts a BatchGetItem as one read request billed item by item', () => {
    const meter = new RequestMeter(config);
    const job = (id: string) => ({ jobId: { S: id } });
    meter.record(
      'dynamo',
      'BatchGetItem',
      { RequestItems: { 'p-jobs': { Keys: [job('a'), job('b'), job('c')], ConsistentRead: false } } },
      { Responses: { 'p-jobs': [job('a'), job('b'), job('c')] } },
      undefined,
    );
    const m = meter.snapshot();
    expect(m.kinds.dynamoRead).toBe(1);
    expect(m.itemsRead).toBe(3);
    expect(m.readUnits.dynamoRead).toBe(1.5);
  });
});
