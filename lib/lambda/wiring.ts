/**
 * The composition root: builds the engine's parts from the environment.
 * Lambda handlers and local replicas both start here, so local and cloud run
 * the same objects.
 */
import type { Random } from '../core/backoff.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { FanOutEventSink, type EventSink } from '../core/events.ts';
import { createAwsClients, type AwsClients } from '../aws/clients.ts';
import { CoalescedJobReader } from '../aws/dynamo/coalesced-job-reader.ts';
import { loadConfig, type CronfenceConfig } from '../aws/config.ts';
import { DynamoSliceStore } from '../aws/dynamo/slice-store.ts';
import { DynamoJobReader } from '../aws/dynamo/job-reader.ts';
import { DynamoWheelStore } from '../aws/dynamo/wheel-store.ts';
import { DynamoChunkStore } from '../aws/dynamo/chunk-store.ts';
import { DynamoOutboxStore } from '../aws/dynamo/outbox-store.ts';
import type { ChunkStore, OutboxStore } from '../core/chunks.ts';
import { dynamoJobRepository } from '../aws/job-repository-wiring.ts';
import type { JobRepository } from '../engine/job-repository.ts';
import { OperatorActions } from '../aws/operator-actions.ts';
import { DeadManWatch } from '../aws/dead-man-watch.ts';
import { DynamoOverlapStore } from '../aws/dynamo/overlap-ops.ts';
import { EventBusSink } from '../aws/eventbridge/event-bus-sink.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { SqsDeadLetterSink, SqsScanQueue, SqsWorkQueue } from '../aws/sqs/work-queue.ts';
import type { JobReader, SliceStore, WheelStore, WorkQueue } from '../core/ports.ts';
import type { HandlerRegistry } from '../engine/define-job.ts';
import { Scanner } from '../engine/scanner.ts';
import { Worker } from '../engine/worker.ts';
import { lambdaEventSource, type SqsEventSource } from './event-source.ts';

export interface Runtime {
  readonly config: CronfenceConfig;
  readonly clients: AwsClients;
  readonly clock: Clock;
  /** The jitter of every retry, the adapters' and the worker's. */
  readonly random: Random;
  readonly events: FanOutEventSink;
  readonly bus: EventBusSink;
  readonly slices: SliceStore;
  /** Chunk records of chunked slices (`ctx.commitChunk`). */
  readonly chunks: ChunkStore;
  /** Outbound requests committed with chunks, for the outbox dispatcher. */
  readonly outbox: OutboxStore;
  /** The timing wheel the scanners take occurrences from. */
  readonly wheel: WheelStore;
  /** Job records as scanners and workers read them. */
  readonly jobReader: JobReader;
  readonly workQueue: WorkQueue;
  readonly scanQueue: SqsScanQueue;
  readonly deadLetters: SqsDeadLetterSink;
  jobs(knownHandlers?: readonly string[]): JobRepository;
  /** Trigger, backfill, pause with an end and a reason, resume, by group too. */
  operator(): OperatorActions;
  /** The dead-man's switch (lib/aws/dead-man-watch.ts): its `stale` events go to `events`. */
  deadMan(): DeadManWatch;
  worker(workerId: string, handlers: HandlerRegistry): Worker;
  scanner(scannerId: string): Scanner;
  /** What the handlers learn from, and tell, the event source that delivers their batches (Lambda's, unless decorated). */
  readonly eventSource: SqsEventSource;
}

/**
 * The ports a wiring may decorate, each given once as the runtime is built: the Lambda metrics time commits
 * (emf-metrics.ts), a local replica's poller is its event source (lib/local/polled-records.ts), the chaos drill
 * injects its faults and reports renewals and refused chunks (tools/chaos/chaos-replica.ts).
 */
export interface RuntimePorts {
  readonly slices: SliceStore;
  readonly chunks: ChunkStore;
  readonly workQueue: WorkQueue;
  readonly eventSource: SqsEventSource;
}

export interface RuntimeOptions {
  readonly env?: Record<string, string | undefined>;
  readonly clock?: Clock;
  /** [0, 1); the jitter source. @default Math.random */
  readonly random?: Random;
  readonly clients?: AwsClients;
  readonly sinks?: EventSink[];
  readonly onError?: (error: unknown, context: string) => void;
  /** Decorates the ports before anything is built on them. @default none */
  readonly decoratePorts?: (ports: RuntimePorts) => RuntimePorts;
}

export function createRuntime(options: RuntimeOptions = {}): Runtime {
  const config = loadConfig(options.env);
  const clients = options.clients ?? createAwsClients();
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const onError = options.onError ?? (() => {});
  const bus = new EventBusSink(clients.events, config.eventBusName, { publishSucceeded: config.publishSucceededEvents }, (error) =>
    onError(error, 'event bus'),
  );
  const events = new FanOutEventSink(bus, ...(options.sinks ?? []));
  const wheel = new DynamoWheelStore(clients.dynamo, config, clock, random);
  const jobReader = new DynamoJobReader(clients.dynamo, config, clock, random);
  const outbox = new DynamoOutboxStore(clients.dynamo, config);
  const workQueueUrl = () => queueUrl(clients.sqs, config.workQueueName, config.queueUrls.work);
  const scanQueueUrl = () => queueUrl(clients.sqs, config.scanQueueName, config.queueUrls.scan);
  const { slices, chunks, workQueue, eventSource } = (options.decoratePorts ?? identity)({
    slices: new DynamoSliceStore(clients.dynamo, config),
    chunks: new DynamoChunkStore(clients.dynamo, config),
    workQueue: new SqsWorkQueue(clients.sqs, workQueueUrl, clock),
    eventSource: lambdaEventSource(clients.sqs, { work: workQueueUrl, scan: scanQueueUrl }, clock),
  });
  const scanQueue = new SqsScanQueue(clients.sqs, scanQueueUrl, clock);
  const deadLetters = new SqsDeadLetterSink(clients.sqs, () =>
    queueUrl(clients.sqs, config.deadLetterQueueName, config.queueUrls.deadLetter),
  );
  return {
    config,
    clients,
    clock,
    random,
    events,
    bus,
    slices,
    chunks,
    outbox,
    wheel,
    jobReader,
    workQueue,
    scanQueue,
    deadLetters,
    eventSource,
    // A change asks for a scan of its shard: its next occurrence is not late by a tick.
    jobs: (knownHandlers) => dynamoJobRepository(clients.dynamo, config, clock, { random, knownHandlers, scans: scanQueue }),
    deadMan: () => new DeadManWatch(clients.dynamo, config, clock, { events }),
    operator: () =>
      new OperatorActions(
        clients.dynamo,
        config,
        clock,
        dynamoJobRepository(clients.dynamo, config, clock, { random, scans: scanQueue }),
        slices,
        workQueue,
        random,
      ),
    worker: (workerId, handlers) =>
      new Worker({
        workerId,
        slices,
        // The reads before a batch's claims share one request.
        jobs: new CoalescedJobReader(jobReader),
        queue: workQueue,
        deadLetters,
        events,
        clock,
        random,
        handlers,
        queueVisibilityMs: config.workQueueVisibilityMs,
        sweepGraceMs: config.sweepGraceMs,
        oneTimeJobs: dynamoJobRepository(clients.dynamo, config, clock, { random }),
        overlap: new DynamoOverlapStore(clients.dynamo, config),
        onError,
        chunks,
      }),
    scanner: (scannerId) =>
      new Scanner({
        scannerId,
        wheel,
        jobs: jobReader,
        slices,
        queue: workQueue,
        events,
        clock,
        lookaheadMs: config.lookaheadMs,
        sweepGraceMs: config.sweepGraceMs,
        onError,
      }),
  };
}

function identity<T>(value: T): T {
  return value;
}
