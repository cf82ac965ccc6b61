/**
 * SQS batch semantics shared by the worker and scanner handlers: records run
 * concurrently and fail alone (ReportBatchItemFailures). A body cronfence
 * cannot read, or a message naming a slice that does not exist, is
 * dead-lettered with the reason and deleted at once, never retried.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { MalformedMessageError, UnrunnableMessageError } from '../core/errors.ts';
import type { RejectedMessageKind } from '../aws/sqs/work-queue.ts';
import type { Disposition } from '../engine/worker.ts';

export interface BatchHooks {
  /** Keeps an unreadable or unrunnable message for an operator. */
  deadLetterRejected(body: string, reason: string, kind: RejectedMessageKind): Promise<void>;
  onError(error: unknown, record: SQSRecord): void;
  /** Each record's disposition as soon as it is known, before the batch ends. */
  settled?(record: SQSRecord, disposition: Disposition): void;
}

export async function handleSqsBatch(
  records: readonly SQSRecord[],
  processRecord: (record: SQSRecord) => Promise<Disposition>,
  hooks: BatchHooks,
): Promise<SQSBatchResponse> {
  const outcomes = await Promise.all(
    records.map(async (record): Promise<Disposition> => {
      const disposition = await dispositionOf(record, processRecord, hooks);
      hooks.settled?.(record, disposition);
      return disposition;
    }),
  );
  return {
    batchItemFailures: records.flatMap((record, index) => (outcomes[index] === 'keep' ? [{ itemIdentifier: record.messageId }] : [])),
  };
}

async function dispositionOf(
  record: SQSRecord,
  processRecord: (record: SQSRecord) => Promise<Disposition>,
  hooks: BatchHooks,
): Promise<Disposition> {
  try {
    return await processRecord(record);
  } catch (error) {
    if (error instanceof MalformedMessageError || error instanceof UnrunnableMessageError) {
      hooks.onError(error, record);
      try {
        await hooks.deadLetterRejected(
          record.body,
          error.reason,
          error instanceof MalformedMessageError ? 'malformed-message' : 'unrunnable-message',
        );
        return 'delete';
      } catch (sendError) {
        hooks.onError(sendError, record);
        return 'keep';
      }
    }
    hooks.onError(error, record);
    return 'keep';
  }
}
