/**
 * The handlers' side of the event source that delivers their batches. Lambda's SQS event source does not say when
 * it received a record, and deletes a batch's records as the batch returns; a local replica's poller says, and
 * deletes its own (lib/local/polled-records.ts, given through `decoratePorts`).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../core/clock.ts';
import { MessageDeletes } from '../aws/sqs/message-deletes.ts';

export interface SqsEventSource {
  /**
   * Since when the source has hidden a received message, at the earliest, by the runtime's clock; undefined when it
   * does not say (Lambda's): then the worker counts from its own start.
   */
  hiddenSince(receiptHandle: string): number | undefined;
  /** The deletes of one batch's records that are done before the batch returns (a new set each call). */
  batchDeletes(queue: 'work' | 'scan', onError: (error: unknown) => void): BatchDeletes;
}

export interface BatchDeletes {
  /** A record settled `delete`: its message goes now, not when its batch returns. */
  delete(receiptHandle: string): void;
  /** The batch returned; resolves once the deletes sent have returned. */
  end(): Promise<void>;
}

/**
 * Behind Lambda's event source a record done early stops being kept hidden (its visibility is the lease's, set at its
 * claim, or the scan's heartbeat's): while a slow batch-mate runs it would surface and be received again. So it is
 * deleted at once, its deletes coalesced with its batch-mates' (docs/architecture.md, "A record done early in a slow
 * batch"); those still waiting when the batch returns are left to the event source, which deletes them then.
 */
export function lambdaEventSource(sqs: SQSClient, urls: Record<'work' | 'scan', () => Promise<string>>, clock: Clock): SqsEventSource {
  return {
    hiddenSince: () => undefined,
    batchDeletes: (queue, onError) => {
      const deletes = new MessageDeletes(sqs, urls[queue], onError, clock);
      return { delete: (receiptHandle) => deletes.delete(receiptHandle), end: () => deletes.discardPending() };
    },
  };
}
