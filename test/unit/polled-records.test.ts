/**
 * The local poller as its handler's event source: it says since when a record in flight has been hidden, and
 * deletes a record once whether the handler settled it early or its batch ended.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/core/clock.ts';
import { PolledRecords } from '../../lib/local/polled-records.ts';

function recordingSqs(): { sqs: SQSClient; deleted: string[] } {
  const deleted: string[] = [];
  const sqs = {
    send: async (command: { input: { Entries?: { ReceiptHandle?: string }[] } }) => {
      deleted.push(...(command.input.Entries ?? []).map((entry) => entry.ReceiptHandle ?? ''));
      return {};
    },
  } as unknown as SQSClient;
  return { sqs, deleted };
}

describe('PolledRecords', () => {
  it('tells since when a record in flight has been hidden, and forgets it when its batch ends', () => {
    const records = new PolledRecords(
      recordingSqs().sqs,
      async () => 'queue',
      () => {},
      systemClock,
    );
    records.received(['a', 'b'], 10_000);
    expect(records.hiddenSince('a')).toBe(10_000);
    expect(records.hiddenSince('c')).toBeUndefined();
    records.ended(['a', 'b']);
    expect(records.hiddenSince('a')).toBeUndefined();
  });

  it('deletes a record settled early once, not again as its batch ends', async () => {
    const { sqs, deleted } = recordingSqs();
    const records = new PolledRecords(
      sqs,
      async () => 'queue',
      () => {},
      systemClock,
    );
    records.received(['a', 'b'], 0);
    const early = records.batchDeletes();
    early.delete('a');
    await early.end();
    // The poller's end of batch: every record not reported failed.
    records.delete('a');
    records.delete('b');
    records.ended(['a', 'b']);
    await records.settle();
    expect(deleted.sort()).toEqual(['a', 'b']);
  });
});
