/**
 * SQS batch semantics shared by the worker and scanner handlers: records run
 * concurrently and fail alone (ReportBatchItemFailures). A body cronfence
 * cannot read is dead-lettered and deleted at once, never retried.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { MalformedMessageError } from '../core/errors.ts';
import type { Disposition } from '../engine/worker.ts';

export interface BatchHooks {
  /** Keeps an unreadable body for an operator. */
  deadLetterMalformed(body: string, reason: string): Promise<void>;
  onError(error: unknown, record: SQSRecord): void;
}

export async function handleSqsBatch(
  records: readonly SQSRecord[],
  processRecord: (record: SQSRecord) => Promise<Disposition>,
  hooks: BatchHooks,
): Promise<SQSBatchResponse> {
  const outcomes = await Promise.all(
    records.map(async (record): Promise<Disposition> => {
      try {
        return await processRecord(record);
      } catch (error) {
        if (error instanceof MalformedMessageError) {
          hooks.onError(error, record);
          try {
            await hooks.deadLetterMalformed(record.body, error.reason);
            return 'delete';
          } catch (sendError) {
            hooks.onError(sendError, record);
            return 'keep';
          }
        }
        hooks.onError(error, record);
        return 'keep';
      }
    }),
  );
  return {
    batchItemFailures: records.flatMap((record, index) => (outcomes[index] === 'keep' ? [{ itemIdentifier: record.messageId }] : [])),
  };
}
