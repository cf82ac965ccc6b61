/**
 * The real Worker and Scanner over the in-memory stores: what Lambda's SQS
 * event source does with a batch (lib/lambda/sqs-batch.ts decides each
 * message's fate; a `delete` is deleted), and helpers to make slices and
 * wait on the engine's events instead of sleeping.
 */
import type { SQSRecord } from 'aws-lambda';
import type { Clock } from '../../lib/core/clock.ts';
import { RecordingEventSink, type LifecycleEvent } from '../../lib/core/events.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import type { SliceKey } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry, type JobFunction } from '../../lib/engine/define-job.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import { Worker, type Disposition, type WorkerDeps } from '../../lib/engine/worker.ts';
import {
  createMemoryInstallation,
  type MemoryInstallation,
  type MemoryTablesOptions,
  type ReceivedWorkMessage,
} from '../../lib/memory/index.ts';
import { handleSqsBatch } from '../../lib/lambda/sqs-batch.ts';

export interface MemoryEngine extends MemoryInstallation {
  readonly clock: Clock;
  readonly events: RecordingEventSink;
  /** Errors the workers reported (lease renewals, hides). */
  readonly errors: string[];
  worker(workerId: string, options?: Partial<WorkerDeps>): Worker;
  scanner(scannerId: string, options?: { lookaheadMs?: number; sweepGraceMs?: number; clock?: Clock }): Scanner;
  /** Registers a job whose handler is `run`, under the handler name `jobId`. */
  register(job: Partial<JobSpecInput> & { id: string }, run: JobFunction): Promise<StoredJob>;
  /** Creates one ENQUEUED slice (as the reconciler does) and sends `copies` messages for it. */
  enqueue(job: StoredJob, scheduledAt: number, copies?: number): Promise<SliceKey>;
  /** Runs one received message through `worker`; deletes it when the worker says so. */
  deliver(worker: Worker, message: ReceivedWorkMessage): Promise<Disposition>;
  /** Receives what is visible now and runs it through `worker` as one batch, until nothing is visible. */
  drain(worker: Worker): Promise<number>;
  /** Resolves with the first event matching `match` (already emitted or yet to come). */
  nextEvent(match: (event: LifecycleEvent) => boolean, timeoutMs?: number): Promise<LifecycleEvent>;
}

export function createMemoryEngine(clock: Clock, tables: MemoryTablesOptions = {}): MemoryEngine {
  const memory = createMemoryInstallation({ ...tables, clock });
  const events = new RecordingEventSink();
  const handlers = new HandlerRegistry();
  const errors: string[] = [];
  const engine: MemoryEngine = {
    ...memory,
    clock,
    events,
    errors,
    worker: (workerId, options = {}) =>
      new Worker({
        workerId,
        slices: memory.slices,
        jobs: memory.jobReader,
        chunks: memory.chunks,
        queue: memory.workQueue,
        deadLetters: memory.deadLetters,
        events,
        clock,
        handlers,
        random: () => 0.5,
        overlap: memory.overlap,
        oneTimeJobs: memory.jobs(),
        onError: (error, context) => errors.push(`${workerId} ${context}: ${String(error)}`),
        ...options,
      }),
    scanner: (scannerId, options = {}) =>
      new Scanner({
        scannerId,
        wheel: memory.wheel,
        jobs: memory.jobReader,
        slices: memory.slices,
        queue: memory.workQueue,
        events,
        clock: options.clock ?? clock,
        lookaheadMs: options.lookaheadMs ?? 30_000,
        sweepGraceMs: options.sweepGraceMs ?? memory.tables.sweepGraceMs,
      }),
    async register(job, run) {
      handlers.register(defineJob(job.id, run));
      return (await memory.jobs().put({ schedule: '* * * * * *', handler: job.id, ...job })).job;
    },
    async enqueue(job, scheduledAt, copies = 1) {
      const key = { jobId: job.id, scheduledAt };
      const stored = (await memory.jobs().get(job.id)) ?? job;
      const created = await memory.slices.enqueue(
        definitionOf(stored),
        [{ ...key, sweepAt: scheduledAt + memory.tables.sweepGraceMs }],
        clock.now(),
      );
      if (created.length !== 1) throw new Error(`could not create slice ${JSON.stringify(key)}: one is there already`);
      await memory.workQueue.send(Array.from({ length: copies }, () => ({ ...key, delaySeconds: 0 })));
      return key;
    },
    async deliver(worker, message) {
      const [disposition] = await runBatch(engine, worker, [message]);
      return disposition!;
    },
    async drain(worker) {
      let processed = 0;
      for (let batch = memory.workQueue.receive(); batch.length > 0; batch = memory.workQueue.receive()) {
        await runBatch(engine, worker, batch);
        processed += batch.length;
      }
      return processed;
    },
    nextEvent: (match, timeoutMs = 5000) => nextEvent(events, match, timeoutMs),
  };
  return engine;
}

async function runBatch(engine: MemoryEngine, worker: Worker, messages: readonly ReceivedWorkMessage[]): Promise<Disposition[]> {
  const records = messages.map(
    (message) => ({ messageId: message.messageId, receiptHandle: message.receiptHandle, body: message.body }) as SQSRecord,
  );
  const response = await handleSqsBatch(
    records,
    (record) => worker.process({ body: record.body, receiptHandle: record.receiptHandle, messageId: record.messageId }),
    {
      deadLetterRejected: (body, reason, kind) => engine.deadLetters.sendRejected(body, reason, kind),
      onError: (error) => engine.errors.push(`batch: ${String(error)}`),
    },
  );
  const kept = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  for (const message of messages) if (!kept.has(message.messageId)) engine.workQueue.delete(message.receiptHandle);
  return messages.map((message) => (kept.has(message.messageId) ? 'keep' : 'delete'));
}

/** Synchronises on what the engine says happened, polling the recording sink on the event loop. */
async function nextEvent(
  events: RecordingEventSink,
  match: (event: LifecycleEvent) => boolean,
  timeoutMs: number,
): Promise<LifecycleEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = events.events.find(match);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no matching event within ${timeoutMs} ms; saw ${events.events.map((e) => `${e.type}@${e.worker}`).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A promise a test resolves when it wants a handler to return. */
export function gate(): { readonly opened: Promise<void>; open(): void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
