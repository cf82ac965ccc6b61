/**
 * The artifact tests' stand-in for the SQS event source mapping
 * (test/support/lambda-events.ts) keeps what AWS documents for
 * ReportBatchItemFailures: a response with no failures deletes the batch,
 * listed items stay, and a listed identifier that is empty, null or not in
 * the batch fails the whole batch.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { failedItems } from '../support/lambda-events.ts';

const records = ['a', 'b', 'c'].map((messageId) => ({ messageId }) as SQSRecord);
const all = new Set(['a', 'b', 'c']);

describe('ReportBatchItemFailures, as the rig applies it', () => {
  it('keeps nothing for an empty, null or missing list, or no response at all', () => {
    for (const response of [undefined, null, {}, { batchItemFailures: [] }, { batchItemFailures: null }])
      expect(failedItems(records, response)).toEqual(new Set());
  });

  it('keeps exactly the listed items', () => {
    expect(failedItems(records, { batchItemFailures: [{ itemIdentifier: 'b' }] })).toEqual(new Set(['b']));
  });

  it('fails the whole batch for an identifier that is empty, null or not in the batch, or a list that is not one', () => {
    for (const itemIdentifier of ['', null, 'z'])
      expect(failedItems(records, { batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier }] })).toEqual(all);
    expect(failedItems(records, { batchItemFailures: 'a' })).toEqual(all);
  });
});
