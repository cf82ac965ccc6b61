/**
 * cronfence in memory: the ports of lib/core/ports.ts over plain maps, with
 * the same rules as the DynamoDB and SQS adapters (test/contract proves it
 * case by case). For unit tests of the engine, and of a user's own handlers,
 * with a ManualClock that can step forward and back: no emulator, no network.
 *
 * Not a production store: one process, no persistence.
 */
import type { Clock } from '../core/clock.ts';
import { InMemoryChunkStore } from './memory-chunk-store.ts';
import { JobRepository } from '../engine/job-repository.ts';
import { InMemoryJobStore } from './memory-jobs.ts';
import { InMemoryOutboxStore } from './memory-outbox-store.ts';
import { InMemoryDeadLetterSink, InMemoryWorkQueue } from './memory-queue.ts';
import { InMemoryOverlapStore } from './memory-overlap-store.ts';
import { InMemorySliceStore } from './memory-slice-store.ts';
import { InMemoryJobReader } from './memory-job-reader.ts';
import { InMemoryWheelStore } from './memory-wheel-store.ts';
import { MemoryTables, type MemoryTablesOptions } from './memory-tables.ts';

export { InMemoryChunkStore } from './memory-chunk-store.ts';
export { InMemoryJobStore } from './memory-jobs.ts';
export { InMemoryOutboxStore } from './memory-outbox-store.ts';
export {
  InMemoryDeadLetterSink,
  InMemoryWorkQueue,
  type QueuedMessage,
  type ReceivedWorkMessage,
  type RejectedMessage,
} from './memory-queue.ts';
export { InMemoryOverlapStore } from './memory-overlap-store.ts';
export { InMemoryJobReader } from './memory-job-reader.ts';
export { InMemoryWheelStore } from './memory-wheel-store.ts';
export { InMemorySliceStore } from './memory-slice-store.ts';
export { MemoryTables, type MemoryTablesOptions } from './memory-tables.ts';

export interface MemoryInstallation {
  readonly tables: MemoryTables;
  readonly slices: InMemorySliceStore;
  readonly chunks: InMemoryChunkStore;
  readonly outbox: InMemoryOutboxStore;
  readonly wheel: InMemoryWheelStore;
  readonly jobReader: InMemoryJobReader;
  readonly overlap: InMemoryOverlapStore;
  /** The queue's clock is the installation's clock: SQS's own, not a worker's. */
  readonly workQueue: InMemoryWorkQueue;
  readonly deadLetters: InMemoryDeadLetterSink;
  /** Job CRUD (engine/job-repository.ts) over these tables; changes wait for the tick (no scan queue). */
  jobs(knownHandlers?: readonly string[]): JobRepository;
}

export function createMemoryInstallation(options: MemoryTablesOptions & { readonly clock: Clock }): MemoryInstallation {
  const tables = new MemoryTables(options);
  const slices = new InMemorySliceStore(tables);
  const wheel = new InMemoryWheelStore(tables);
  const jobReader = new InMemoryJobReader(tables);
  return {
    tables,
    slices,
    chunks: new InMemoryChunkStore(tables),
    outbox: new InMemoryOutboxStore(tables),
    wheel,
    jobReader,
    overlap: new InMemoryOverlapStore(tables),
    workQueue: new InMemoryWorkQueue(options.clock),
    deadLetters: new InMemoryDeadLetterSink(),
    jobs: (knownHandlers) =>
      new JobRepository({
        jobs: new InMemoryJobStore(tables),
        reader: jobReader,
        slices,
        wheel,
        clock: options.clock,
        shardCount: tables.shardCount,
        knownHandlers,
      }),
  };
}
