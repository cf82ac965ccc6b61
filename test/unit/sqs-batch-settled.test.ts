/**
 * handleSqsBatch tells each record's disposition as soon as it is known, before
 * the batch ends: the local poller deletes a done record then, instead of
 * letting it surface again behind a slow one (lib/local/sqs-poller.ts).
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { UnrunnableMessageError } from '../../lib/core/errors.ts';
import type { Disposition } from '../../lib/engine/worker.ts';
import { handleSqsBatch } from '../../lib/lambda/sqs-batch.ts';
import { gate } from '../support/memory-engine.ts';

function record(body: string): SQSRecord {
  return { messageId: body, receiptHandle: `${body}-handle`, body } as SQSRecord;
}

describe('handleSqsBatch', () => {
  it('settles each record as it finishes, while the others still run', async () => {
    const slowDone = gate();
    const settled: string[] = [];
    const batch = handleSqsBatch(
      [record('fast'), record('slow'), record('unrunnable'), record('failing')],
      async ({ body }): Promise<Disposition> => {
        if (body === 'slow') await slowDone.opened;
        if (body === 'unrunnable') throw new UnrunnableMessageError(body, 'no such slice exists');
        if (body === 'failing') throw new Error('store busy');
        return 'delete';
      },
      {
        deadLetterRejected: async () => {},
        onError: () => {},
        settled: (settledRecord, disposition) => settled.push(`${settledRecord.body}:${disposition}`),
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled.sort()).toEqual(['failing:keep', 'fast:delete', 'unrunnable:delete']);
    slowDone.open();
    expect(await batch).toEqual({ batchItemFailures: [{ itemIdentifier: 'failing' }] });
    expect(settled).toContain('slow:delete');
  });
});
