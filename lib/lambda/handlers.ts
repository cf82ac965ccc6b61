/**
 * The three Lambda handlers as factories over a Runtime. functions/ wires
 * them with the production runtime; the local replicas wire them with theirs
 * (a process-local worker id, a skewable clock), so both run the same code.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { decodeScanMessage } from '../core/messages.ts';
import { SCAN_QUEUE } from '../aws/schema.ts';
import type { RejectedMessageKind } from '../aws/sqs/work-queue.ts';
import type { HandlerRegistry } from '../engine/define-job.ts';
import type { Disposition } from '../engine/worker.ts';
import { keepHidden } from '../engine/keep-hidden.ts';
import type { ScanReport } from '../engine/scanner.ts';
import { tick } from '../engine/ticker.ts';
import type { MessageDeletes } from '../aws/sqs/message-deletes.ts';
import { handleSqsBatch } from './sqs-batch.ts';
import type { Runtime } from './wiring.ts';

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface HandlerLog {
  error(message: string, details: Record<string, unknown>): void;
  info(message: string, details: Record<string, unknown>): void;
}

/**
 * Puts one scan request per shard, then runs one bounded step of the
 * dead-man's switch (lib/aws/dead-man-watch.ts: its `stale` events go to the
 * bus and the metrics). A failing step is logged and never stops the scans,
 * which went out first; a job it could not judge is logged by name.
 */
export function createTickHandler(runtime: Runtime, log?: HandlerLog): () => Promise<{ shards: number; staleJobs?: number }> {
  return async () => {
    const shards = await tick(runtime.scanQueue, runtime.config.shardCount);
    const now = runtime.clock.now();
    try {
      const step = await runtime.deadMan().check(now);
      await runtime.bus.flush();
      if (step.unjudged.length > 0) log?.error("dead-man's switch could not judge jobs", { jobs: step.unjudged.slice(0, 20), count: step.unjudged.length });
      return { shards, staleJobs: step.stale.length };
    } catch (error) {
      log?.error("dead-man's switch failed", { error: String(error) });
      return { shards };
    }
  };
}

export function createWorkerHandler(runtime: Runtime, workerId: string, handlers: HandlerRegistry, log: HandlerLog): SqsHandler {
  const worker = runtime.worker(workerId, handlers);
  return async (event) => {
    const early = earlyDeletes(runtime, 'work', log);
    const response = await handleSqsBatch(
      event.Records,
      (record) =>
        worker.process({
          body: record.body,
          receiptHandle: record.receiptHandle,
          messageId: record.messageId,
          receiveCount: receiveCountOf(record),
          ...(isPolledRecord(record) && { hiddenSince: record.hiddenSince }),
        }),
      batchHooks(runtime, 'work', log, early),
    );
    await Promise.all([runtime.bus.flush(), endOfBatch(early)]);
    return response;
  };
}

export interface ScannerHandlerOptions {
  /** How long one scan may take before it re-queues the rest of its shard. @default 20000 */
  readonly scanBudgetMs?: number;
  /** Every scan's report, as it ends (a local replica sends it to its parent). */
  readonly onScan?: (report: ScanReport) => void;
}

export function createScannerHandler(runtime: Runtime, scannerId: string, log: HandlerLog, options: ScannerHandlerOptions = {}): SqsHandler {
  const scanner = runtime.scanner(scannerId);
  const budget = options.scanBudgetMs ?? 20_000;
  return async (event) => {
    const early = earlyDeletes(runtime, 'scan', log);
    const response = await handleSqsBatch(
      event.Records,
      async (record) => {
        const { shard } = decodeScanMessage(record.body);
        const report = await withVisibilityHeartbeat(runtime, record, () =>
          scanner.scanShard(shard, { deadline: runtime.clock.now() + budget }),
        );
        if (report.incomplete) await runtime.scanQueue.send([{ shard }]);
        logScan(log, scannerId, report);
        options.onScan?.(report);
        return 'delete';
      },
      batchHooks(runtime, 'scan', log, early),
    );
    await Promise.all([runtime.bus.flush(), endOfBatch(early)]);
    return response;
  };
}

/**
 * Keeps the scan message hidden while this scanner is alive. The scan queue's
 * short visibility timeout is the scanner failover timer: a dead scanner's
 * shard comes back within it. Beats come at 40 % of it, so one slow
 * extension does not let the message surface under a live scanner.
 */
function withVisibilityHeartbeat<T>(runtime: Runtime, record: SQSRecord, work: () => Promise<T>): Promise<T> {
  const seconds = SCAN_QUEUE.visibilityTimeoutSeconds;
  return keepHidden(runtime.scanQueue, record.receiptHandle, { everyMs: (seconds * 1000) / 2.5, visibilitySeconds: seconds }, work);
}

/**
 * Behind Lambda's event source a record's message is deleted when its whole batch returns, but a record done early
 * stops being kept hidden when it is done (its visibility is the lease's, set at its claim, or the scan's heartbeat's):
 * while a slow batch-mate runs it would surface and be received again, one more receive and invocation for nothing.
 * So a record settled `delete` is deleted at once, its deletes coalesced with its batch-mates' (docs/architecture.md,
 * "A record done early in a slow batch"). The local poller does the same for its own records.
 */
function earlyDeletes(runtime: Runtime, queue: 'work' | 'scan', log: HandlerLog): MessageDeletes {
  return runtime.messageDeletes(queue, (error) => log.error('early delete failed (the event source deletes it with its batch)', { queue, error: String(error) }));
}

/** The deletes still waiting to go are left to the event source, which deletes the batch's records as it returns: no second request for them. */
function endOfBatch(early: MessageDeletes): Promise<void> {
  return early.discardPending();
}

function batchHooks(runtime: Runtime, queue: 'work' | 'scan', log: HandlerLog, early: MessageDeletes) {
  return {
    deadLetterRejected: (body: string, reason: string, kind: RejectedMessageKind) => runtime.deadLetters.sendRejected(body, reason, queue, kind),
    onError: (error: unknown, record: SQSRecord) =>
      log.error('message failed', { queue, messageId: record.messageId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
    settled: (record: SQSRecord, disposition: Disposition) => {
      if (isPolledRecord(record)) record.settled(disposition);
      else if (disposition === 'delete') early.delete(record.receiptHandle);
    },
  };
}

function logScan(log: HandlerLog, scannerId: string, report: ScanReport): void {
  if (report.sent + report.swept + report.reconciled + report.missed + report.skipped + report.errors > 0 || report.incomplete) {
    log.info('scanned shard', { scanner: scannerId, ...report });
  }
}

/**
 * A record the local poller (lib/local/sqs-poller.ts) received: it knows since when SQS has hidden it at the earliest,
 * by the handler's clock. Lambda's event source does not say when it received a record: there the worker counts
 * from its own start.
 */
export interface PolledSqsRecord extends SQSRecord {
  readonly hiddenSince: number;
  /**
   * Told the record's disposition as soon as it is known: the poller deletes a record settled `delete` at once, not
   * when its batch ends (a record's visibility is the lease's, so a record done early in a slow batch would surface
   * and be received again; test/integration/poller-early-delete.test.ts). Behind Lambda the handler deletes such a
   * record itself (`earlyDeletes`).
   */
  readonly settled: (disposition: Disposition) => void;
}

function isPolledRecord(record: SQSRecord): record is PolledSqsRecord {
  return typeof (record as Partial<PolledSqsRecord>).hiddenSince === 'number' && typeof (record as Partial<PolledSqsRecord>).settled === 'function';
}

/** SQS's ApproximateReceiveCount of a record, when it has one. */
function receiveCountOf(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : undefined;
}
