/**
 * The simulated fleet: scanner and worker processes running the engine's real
 * Scanner and Worker over the simulated services. A worker process polls the
 * work queue as the local event source does (lib/local/sqs-poller.ts): long
 * polls of one second, up to four batches of ten in flight, each batch run by
 * the Lambda handler's batch rules (lib/lambda/sqs-batch.ts), each record
 * deleted as soon as it is settled for deletion.
 */
import type { SQSRecord } from 'aws-lambda';
import { executionKey } from '../../lib/core/execution-key.ts';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import type { LifecycleEvent } from '../../lib/core/events.ts';
import type { WorkMessage } from '../../lib/core/ports.ts';
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import { Worker } from '../../lib/engine/worker.ts';
import { handleSqsBatch } from '../../lib/lambda/sqs-batch.ts';
import type { MemoryInstallation, ReceivedWorkMessage } from '../../lib/memory/index.ts';
import { merchantSettlement } from '../../examples/jobs/settlement.ts';
import type { ObservedChunk, ObservedEvent, ObservedReceive, ObservedRenewal } from '../chaos/observed.ts';
import { SeededRandom } from '../chaos/random.ts';
import { reportingRenewals } from '../chaos/renewal-reports.ts';
import { reportingChunks } from '../chaos/settlement-chunks.ts';
import { simHandlers } from './sim-handlers.ts';
import type { RequestSubject, SimNetwork } from './sim-network.ts';
import { MAX_SKEW_MS, SimProcess, type ProcessRole } from './sim-process.ts';
import { startDispatcher, type SimBank } from './sim-settlement.ts';
import type { VirtualClock } from './virtual-clock.ts';

/** The engine's settings in the simulation: the drill's (tools/chaos/drill.ts). */
export const SIM_SETTINGS = { lookaheadMs: 20_000, sweepGraceMs: 30_000, queueVisibilityMs: 3000, tickMs: 5000 } as const;
const LONG_POLL_MS = 1000;
const BATCHES_IN_FLIGHT = 4;
const BATCH_SIZE = 10;
/** After a failed receive, as the local poller does. */
const RECEIVE_ERROR_PAUSE_MS = 500;

/** A work message sent: for the checker's trace (was it sent, when, with what delay, dropped?). */
export interface SimSend {
  readonly process: string;
  readonly executionKey: string;
  readonly at: number;
  readonly delaySeconds: number;
  readonly fate: 'sent' | 'duplicated' | 'lost';
}

export interface SimObservations {
  readonly events: ObservedEvent[];
  readonly renewals: ObservedRenewal[];
  readonly receives: ObservedReceive[];
  readonly sends: SimSend[];
  /** Chunk commits as the workers saw them (the settlement checks'). */
  readonly chunks: ObservedChunk[];
  readonly errors: { process: string; context: string; message: string }[];
}

export interface QueueFaults {
  /** Per message sent. */
  readonly duplicate: number;
  readonly lateDuplicate: number;
  readonly loss: number;
}

export interface FleetContext {
  readonly time: VirtualClock;
  readonly install: MemoryInstallation;
  readonly network: SimNetwork;
  readonly seed: number;
  readonly observed: SimObservations;
  readonly queueFaults: QueueFaults;
  /** Where the settlement's wires go, when the settlement runs. */
  readonly bank?: SimBank;
  /** Told of each chunk report as it arrives (the settlement's mid-batch faults). */
  readonly onChunk?: (chunk: ObservedChunk) => void;
}

export interface SimReplica {
  readonly process: SimProcess;
  /** Messages whose batch is running (a kill picks a busy worker, as the drill does). */
  readonly busy: () => boolean;
  /** A scanner's scan of one shard, run when the tick asks. */
  scan?(shard: number): void;
}

export function startReplica(context: FleetContext, role: ProcessRole, id: string): SimReplica {
  const { time, install, network, observed } = context;
  const random = new SeededRandom(context.seed ^ hash(id));
  const process = new SimProcess(id, role, time, random.chance(0.7) ? random.int(-MAX_SKEW_MS, MAX_SKEW_MS) : 0);
  const onError = (error: unknown, where: string): void => {
    observed.errors.push({
      process: id,
      context: where,
      message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  };
  const sliceOf = (args: unknown[]): RequestSubject => ({ executionKey: sliceKeyOf(args[0]) });
  if (role === 'dispatcher') {
    if (context.bank === undefined) throw new Error(`${id}: a dispatcher needs the settlement's bank`);
    startDispatcher(process, install, network, context.bank, random, onError);
    return { process, busy: () => false };
  }
  const renewing = reportingRenewals(
    network.connect(install.slices, process, 'dynamodb', sliceOf),
    ({ key, fence, at, disarmed, rearmed }) =>
      observed.renewals.push({
        replica: id,
        offsetMs: process.offsetMs,
        executionKey: executionKey(key.jobId, key.scheduledAt),
        fence,
        at,
        ...(disarmed && { disarmed: true as const }),
        ...(rearmed && { rearmed: true as const }),
      }),
  );
  const { slices, chunks } = reportingChunks(
    { slices: renewing, chunks: network.connect(install.chunks, process, 'dynamodb', sliceOf) },
    (reported) => {
      const chunk = { ...reported, replica: id, at: time.now() };
      observed.chunks.push(chunk);
      context.onChunk?.(chunk);
    },
  );
  const queue = network.connect(faultyQueue(context, process, random), process, 'sqs', (args) => ({
    executionKey: typeof args[0] === 'string' ? keyOfHandle(install, args[0]) : undefined,
  }));
  const parts = {
    slices,
    // A job read (JobReader.record, records) names jobs, not slices.
    jobs: network.connect(install.jobReader, process, 'dynamodb', (args) => ({
      jobIds: (Array.isArray(args[0]) ? args[0] : [args[0]]).filter((id): id is string => typeof id === 'string'),
    })),
    queue,
    events: { emit: (event: LifecycleEvent) => observed.events.push({ replica: id, offsetMs: process.offsetMs, event }) },
    clock: process,
    random: () => random.next(),
    sweepGraceMs: SIM_SETTINGS.sweepGraceMs,
    onError,
  };
  if (role === 'scanner') {
    const scanner = new Scanner({
      ...parts,
      scannerId: id,
      wheel: network.connect(install.wheel, process, 'dynamodb'),
      lookaheadMs: SIM_SETTINGS.lookaheadMs,
    });
    let scanning = 0;
    return {
      process,
      busy: () => scanning > 0,
      scan: (shard) => {
        scanning++;
        void process
          .gate()
          .then(() => scanner.scanShard(shard))
          .catch((error: unknown) => onError(error, `scan of shard ${shard}`))
          .finally(() => scanning--);
      },
    };
  }
  const worker = new Worker({
    ...parts,
    workerId: id,
    deadLetters: network.connect(install.deadLetters, process, 'sqs'),
    handlers: new HandlerRegistry([...simHandlers(process, random), merchantSettlement]),
    chunks,
    queueVisibilityMs: SIM_SETTINGS.queueVisibilityMs,
    overlap: network.connect(install.overlap, process, 'dynamodb'),
  });
  let running = 0;
  const poll = async (): Promise<void> => {
    for (;;) {
      let received: ReceivedWorkMessage[];
      let sentAt = process.now();
      try {
        received = await network.request(
          process,
          'ReceiveMessageCommand',
          () => ({}),
          () => longPoll(time, install, (taken) => recordReceives(observed, id, time, taken)),
          (messages) => messages.map((message) => keyOfBody(message.body)),
          undefined,
          () => (sentAt = process.now()),
        );
      } catch (error) {
        onError(error, 'receive');
        await process.sleep(RECEIVE_ERROR_PAUSE_MS);
        continue;
      }
      if (received.length === 0) continue;
      // The local poller's rule: hidden since the send of the try that answered (lib/local/sqs-poller.ts).
      const since = sentAt;
      running++;
      await handleSqsBatch(
        received.map(toRecord),
        (record) =>
          worker.process({
            body: record.body,
            receiptHandle: record.receiptHandle,
            messageId: record.messageId,
            receiveCount: Number(record.attributes.ApproximateReceiveCount),
            hiddenSince: since,
          }),
        {
          deadLetterRejected: (body, reason, kind) =>
            network.request(
              process,
              'sqs.sendRejected',
              () => ({}),
              () => install.deadLetters.sendRejected(body, reason, kind),
            ),
          onError: (error) => onError(error, 'batch'),
          settled: (record, disposition) => {
            if (disposition !== 'delete') return;
            void network
              .request(
                process,
                'sqs.delete',
                () => ({ executionKey: keyOfHandle(install, record.receiptHandle) }),
                () => install.workQueue.delete(record.receiptHandle),
              )
              .catch((error: unknown) => onError(error, 'delete'));
          },
        },
      ).finally(() => running--);
    }
  };
  for (let slot = 0; slot < BATCHES_IN_FLIGHT; slot++) void poll();
  return { process, busy: () => running > 0 };
}

/**
 * A receive held open on the server for up to a second until a message is
 * visible; the server takes the messages it returns even if the poller died
 * meanwhile (the dead worker's long poll that takes a message).
 */
async function longPoll(
  time: VirtualClock,
  install: MemoryInstallation,
  onTaken: (messages: readonly ReceivedWorkMessage[]) => void,
): Promise<ReceivedWorkMessage[]> {
  const until = time.now() + LONG_POLL_MS;
  for (;;) {
    const received = install.workQueue.receive(time.now(), { max: BATCH_SIZE, visibilitySeconds: SIM_SETTINGS.queueVisibilityMs / 1000 });
    onTaken(received);
    if (received.length > 0 || time.now() >= until) return received;
    const next = install.workQueue.nextVisibleAfter(time.now());
    await time.sleep(Math.min(until, next ?? until) - time.now());
  }
}

/**
 * Receives as the queue hands them out, on true time: a receive whose reply never reaches its worker (killed or
 * paused on the way) still took the message, and the checker must see whose it was (failoverAfterHolderOfMessageStopped).
 */
function recordReceives(observed: SimObservations, replica: string, time: VirtualClock, messages: readonly ReceivedWorkMessage[]): void {
  for (const message of messages)
    observed.receives.push({
      replica,
      executionKey: keyOfBody(message.body),
      at: time.now(),
      messageId: message.messageId,
      receiveCount: message.receiveCount,
    });
}

/** The work queue with SQS's delivery faults on send: a message may arrive twice, twice with the copy late, or never. */
function faultyQueue(context: FleetContext, process: SimProcess, random: SeededRandom): MemoryInstallation['workQueue'] {
  const { install, observed, queueFaults, time, network } = context;
  const inner = install.workQueue;
  return Object.assign(Object.create(inner) as MemoryInstallation['workQueue'], {
    async send(messages: readonly WorkMessage[]): Promise<void> {
      const out: WorkMessage[] = [];
      for (const message of messages) {
        const draw = network.faultsOn ? random.next() : 1;
        const fate = draw < queueFaults.loss ? 'lost' : draw < queueFaults.loss + queueFaults.duplicate ? 'duplicated' : 'sent';
        observed.sends.push({
          process: process.id,
          executionKey: executionKey(message.jobId, message.scheduledAt),
          at: time.now(),
          delaySeconds: message.delaySeconds ?? 0,
          fate,
        });
        if (fate !== 'lost') out.push(message);
        if (fate === 'duplicated') out.push(message);
        else if (fate === 'sent' && network.faultsOn && random.chance(queueFaults.lateDuplicate))
          out.push({ ...message, delaySeconds: Math.min(900, (message.delaySeconds ?? 0) + random.int(3, 40)) });
      }
      await inner.send(out);
    },
  });
}

function toRecord(message: ReceivedWorkMessage): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: '0',
      SenderId: 'sim',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'sim:work',
    awsRegion: 'us-east-1',
  };
}

/** The slice of the message a receipt handle was given for, while it is on the queue. */
function keyOfHandle(install: MemoryInstallation, receiptHandle: string): string | undefined {
  const body = install.workQueue.bodyOf(receiptHandle);
  return body === undefined ? undefined : keyOfBody(body);
}

/** The slice a body names; a body that is no work message (a forged one) names none the checker knows. */
function keyOfBody(body: string): string {
  try {
    const key = decodeWorkMessage(body);
    return executionKey(key.jobId, key.scheduledAt);
  } catch {
    return UNREADABLE;
  }
}

const UNREADABLE = '(unreadable)';

function sliceKeyOf(argument: unknown): string | undefined {
  if (typeof argument !== 'object' || argument === null) return undefined;
  const candidate = 'key' in argument ? (argument as { key: unknown }).key : argument;
  if (typeof candidate !== 'object' || candidate === null || !('jobId' in candidate) || !('scheduledAt' in candidate)) return undefined;
  const { jobId, scheduledAt } = candidate as { jobId: unknown; scheduledAt: unknown };
  return typeof jobId === 'string' && typeof scheduledAt === 'number' ? executionKey(jobId, scheduledAt) : undefined;
}

export function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0;
  return h;
}
