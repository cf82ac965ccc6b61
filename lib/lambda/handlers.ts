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
import { HeldMessage } from '../engine/held-message.ts';
import type { ScanReport } from '../engine/scanner.ts';
import { tick } from '../engine/ticker.ts';
import type { BatchDeletes } from './event-source.ts';
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
      if (step.unjudged.length > 0)
        log?.error("dead-man's switch could not judge jobs", { jobs: step.unjudged.slice(0, 20), count: step.unjudged.length });
      return { shards, staleJobs: step.stale.length };
    } catch (error) {
      log?.error("dead-man's switch failed", { error: String(error) });
      return { shards };
    }
  };
}

export function createWorkerHandler(runtime: Runtime, workerId: string, handlers: HandlerRegistry, log: HandlerLog): SqsHandler {
  const worker = runtime.worker(workerId, handlers);
  const { eventSource } = runtime;
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
          hiddenSince: eventSource.hiddenSince(record.receiptHandle),
        }),
      batchHooks(runtime, 'work', log, early),
    );
    await Promise.all([runtime.bus.flush(), early.end()]);
    return response;
  };
}

export interface ScannerHandlerOptions {
  /** How long one scan may take before it re-queues the rest of its shard. @default 20000 */
  readonly scanBudgetMs?: number;
  /** Every scan's report, as it ends (a local replica sends it to its parent). */
  readonly onScan?: (report: ScanReport) => void;
}

export function createScannerHandler(
  runtime: Runtime,
  scannerId: string,
  log: HandlerLog,
  options: ScannerHandlerOptions = {},
): SqsHandler {
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
    await Promise.all([runtime.bus.flush(), early.end()]);
    return response;
  };
}

/**
 * Keeps the scan message hidden while this scanner is alive. The scan queue's
 * short visibility timeout is the scanner failover timer: a dead scanner's
 * shard comes back within it. Beats come at 40 % of it, so one slow
 * extension does not let the message surface under a live scanner. As a
 * work message's, through a HeldMessage: none once its receipt may have lapsed, when
 * another scanner may hold the message and a late change would hide its copy.
 */
function withVisibilityHeartbeat<T>(runtime: Runtime, record: SQSRecord, work: () => Promise<T>): Promise<T> {
  const seconds = SCAN_QUEUE.visibilityTimeoutSeconds;
  const { receiptHandle } = record;
  const held = new HeldMessage(
    runtime.scanQueue,
    runtime.clock,
    receiptHandle,
    runtime.eventSource.hiddenSince(receiptHandle),
    seconds * 1000,
  );
  return held.keepHiddenWhile(work, { everyMs: (seconds * 1000) / 2.5, seconds });
}

/** A record settled `delete` goes at once, not when its batch returns (event-source.ts). */
function earlyDeletes(runtime: Runtime, queue: 'work' | 'scan', log: HandlerLog): BatchDeletes {
  return runtime.eventSource.batchDeletes(queue, (error) =>
    log.error('early delete failed (the event source deletes it with its batch)', { queue, error: String(error) }),
  );
}

function batchHooks(runtime: Runtime, queue: 'work' | 'scan', log: HandlerLog, early: BatchDeletes) {
  return {
    deadLetterRejected: (body: string, reason: string, kind: RejectedMessageKind) =>
      runtime.deadLetters.sendRejected(body, reason, queue, kind),
    onError: (error: unknown, record: SQSRecord) =>
      log.error('message failed', {
        queue,
        messageId: record.messageId,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      }),
    settled: (record: SQSRecord, disposition: Disposition) => {
      if (disposition === 'delete') early.delete(record.receiptHandle);
    },
  };
}

function logScan(log: HandlerLog, scannerId: string, report: ScanReport): void {
  if (report.sent + report.swept + report.reconciled + report.missed + report.skipped + report.errors > 0 || report.incomplete) {
    log.info('scanned shard', { scanner: scannerId, ...report });
  }
}

/** SQS's ApproximateReceiveCount of a record, when it has one. */
function receiveCountOf(record: SQSRecord): number | undefined {
  const count = Number(record.attributes?.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : undefined;
}
