/**
 * Faults at a chaos replica's SDK client boundary, for DynamoDB and SQS:
 *
 * - throttle: some calls have their first 1 to 3 tries refused before they
 *   are sent (a ThrottlingException, 400, retryable as throttling, or a 500
 *   InternalServerError, shaped as the SDK deserializes them; for a
 *   transaction, half the time a TransactionCanceledException naming one item
 *   ThrottlingError), so nothing was applied. The SDK's own retries (3 tries)
 *   absorb one or two; a third reaches our code (StoreBusyError, a commit
 *   sent again, a message hidden and tried again).
 * - hang: some tries are sent to a loopback server that accepts the
 *   connection and never answers, so the client's real request timeout fires
 *   (3 s; a long poll's own), as for a request lost on the network. (A
 *   middleware that simply never called `next` would never time out: the
 *   timeout lives in the HTTP handler.) Never applied either.
 *
 * Both sit in the finalizeRequest step below the retry middleware, so each
 * SDK try is a separate chance and is counted once per call.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { DynamoDBServiceException, InternalServerError, ThrottlingException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { RequestThrottled, SQSServiceException } from '@aws-sdk/client-sqs';
import type { FinalizeRequestMiddleware, HttpRequest, MiddlewareStack } from '@smithy/types';
import type { AwsClients } from '../../lib/aws/clients.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import type { ReplicaChaosConfig } from './config.ts';
import type { FaultReporter } from './chaos-ports.ts';
import type { SeededRandom } from './random.ts';

type Service = 'dynamo' | 'sqs';

/** Calls that are not faulted: the queue URL lookup runs once at start-up, before the replica reports ready. */
const EXEMPT_COMMANDS = new Set(['GetQueueUrlCommand']);

/** A loopback server that accepts every connection and never writes a byte. */
export class HangServer {
  private readonly sockets = new Set<Socket>();
  private readonly server: Server = createServer((socket) => {
    this.sockets.add(socket);
    socket.on('error', () => {}); // the client gives up and resets: expected
    socket.on('close', () => this.sockets.delete(socket));
    socket.resume(); // read and discard the request
  });
  port = 0;

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    this.server.unref();
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('hang server has no port');
    this.port = address.port;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export interface ClientFaultOptions {
  readonly config: Pick<ReplicaChaosConfig, 'throttleRate' | 'hangRate'>;
  readonly random: SeededRandom;
  readonly report: FaultReporter;
  /** Where hung requests go; needed when `hangRate` > 0. */
  readonly hangServer?: HangServer;
  /** Told of each work message received, by the slice it names (the drill times a takeover's receive). */
  readonly onReceived?: (receive: ReceivedWork) => void;
}

/** Adds the throttle and hang middleware to the DynamoDB and SQS clients. */
export function injectClientFaults(clients: Pick<AwsClients, 'dynamo' | 'sqs'>, options: ClientFaultOptions): void {
  if (options.config.hangRate > 0 && !options.hangServer) throw new RangeError('hangRate > 0 needs a hang server');
  for (const service of ['dynamo', 'sqs'] as const) {
    (clients[service].middlewareStack as MiddlewareStack<object, object>).add(clientFaults(service, options), {
      step: 'finalizeRequest',
      priority: 'low',
      name: `cronfenceChaosClientFaults-${service}`,
    });
  }
}

function clientFaults(service: Service, options: ClientFaultOptions): FinalizeRequestMiddleware<object, object> {
  const { config, random, report } = options;
  // Tries still to refuse, per call: the context object is the same for every try of one call.
  const refusals = new WeakMap<object, number>();
  const received = new ReceivedSlices(options.onReceived);
  return (next, context) => async (args) => {
    const command = String(context.commandName ?? '');
    if (EXEMPT_COMMANDS.has(command)) return next(args);
    // A batch (visibility changes of several messages) names each of its slices: the fault is on each one's path.
    const named = service === 'dynamo' ? [sliceNamedBy(args.input)] : received.slicesOf(args.input);
    const slices = named.length > 0 ? named : [undefined];
    // Asked only when a fault is reported: most requests draw none.
    const jobs = (): string[] => (service === 'dynamo' && named[0] === undefined ? jobsNamedBy(args.input) : []);
    if (!refusals.has(context)) {
      const throttled = random.chance(config.throttleRate);
      refusals.set(context, throttled ? random.pick([1, 1, 1, 2, 2, 3]) : 0);
      if (throttled) for (const slice of slices) report('throttle', slice, command, jobs());
    }
    const left = refusals.get(context) ?? 0;
    if (left > 0) {
      refusals.set(context, left - 1);
      throw refusal(service, command, args.request as HttpRequest, random);
    }
    if (options.hangServer && random.chance(config.hangRate)) {
      for (const slice of slices) report('hang', slice, command, jobs());
      return next({ ...args, request: toHangServer(args.request as HttpRequest, options.hangServer.port) });
    }
    const result = await next(args);
    if (service === 'sqs') received.note(command, args.input, result.output);
    return result;
  };
}

/** A received work message: its slice, and which message and delivery it was (a copy has its own id). */
export interface ReceivedWork {
  readonly executionKey: string;
  readonly messageId: string;
  readonly receiveCount: number;
}

/**
 * Which slice each received work message names, by receipt handle, so a
 * fault on a visibility change or delete can be tied to its slice too. Only
 * this replica's own receives; forgotten on delete (and past a bound).
 */
class ReceivedSlices {
  private readonly byHandle = new Map<string, string>();

  constructor(private readonly onReceived?: (receive: ReceivedWork) => void) {}

  note(command: string, input: unknown, output: unknown): void {
    if (command === 'DeleteMessageCommand' || command === 'DeleteMessageBatchCommand')
      for (const handle of handlesOf(input)) this.byHandle.delete(handle);
    if (command !== 'ReceiveMessageCommand') return;
    for (const message of (
      output as { Messages?: { Body?: string; ReceiptHandle?: string; MessageId?: string; Attributes?: Record<string, string> }[] }
    ).Messages ?? []) {
      try {
        const key = decodeWorkMessage(message.Body ?? '');
        const slice = executionKey(key.jobId, key.scheduledAt);
        if (message.ReceiptHandle) this.byHandle.set(message.ReceiptHandle, slice);
        this.onReceived?.({
          executionKey: slice,
          messageId: message.MessageId ?? '',
          receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
        });
      } catch {
        // A scan request or a bogus body: no slice to tie a fault to.
      }
    }
    if (this.byHandle.size > 10_000) this.byHandle.delete(this.byHandle.keys().next().value as string);
  }

  slicesOf(input: unknown): string[] {
    return handlesOf(input).flatMap((handle) => this.byHandle.get(handle) ?? []);
  }
}

/** The receipt handles a request names: its own, or its batch entries'. */
function handlesOf(input: unknown): string[] {
  const request = input as { ReceiptHandle?: string; Entries?: { ReceiptHandle?: string }[] };
  return [request.ReceiptHandle, ...(request.Entries ?? []).map((entry) => entry.ReceiptHandle)].filter(
    (handle): handle is string => handle !== undefined,
  );
}

/**
 * The execution key of the slice a DynamoDB request reads or writes, if any (the checker ties the fault to its slice):
 * by its key, or by the item it puts. A first claim puts the slice: named by its key alone, a standby's throttled
 * claim went untied, and the failover it slowed counted as bounded.
 */
function sliceNamedBy(input: unknown): string | undefined {
  type Named = { Key?: KeyAttributes; Item?: KeyAttributes };
  const request = input as Named & { TransactItems?: Record<string, Named | undefined>[] };
  const parts = [request, ...(request.TransactItems ?? []).flatMap((item) => Object.values(item))];
  const keys = parts.flatMap((part) => [part?.Key, part?.Item]);
  const slice = keys.find((key) => key?.jobId?.S !== undefined && key.scheduledAt?.N !== undefined);
  return slice ? executionKey(slice.jobId!.S!, Number(slice.scheduledAt!.N)) : undefined;
}

/**
 * The jobs a DynamoDB request names by their own item's key (a job read: `GetItem`, or a batch's `BatchGetItem`): a
 * standby's throttled job read before its claim delays its takeover as much as a throttled claim does (a 300 s drill:
 * 5.5 s, counted as bounded while the read went untied).
 */
function jobsNamedBy(input: unknown): string[] {
  const request = input as { Key?: KeyAttributes; RequestItems?: Record<string, { Keys?: KeyAttributes[] } | undefined> };
  const keys = [request.Key, ...Object.values(request.RequestItems ?? {}).flatMap((table) => table?.Keys ?? [])];
  return keys.flatMap((key) => (key?.jobId?.S !== undefined && key.scheduledAt === undefined ? [key.jobId.S] : []));
}

type KeyAttributes = { readonly jobId?: { readonly S?: string }; readonly scheduledAt?: { readonly N?: string } };

/** A copy of the request addressed to the hang server (the SDK reuses the original for its next try). */
function toHangServer(request: HttpRequest, port: number): HttpRequest {
  return { ...request, protocol: 'http:', hostname: '127.0.0.1', port, headers: { ...request.headers } };
}

/** What the service would have answered had it refused the request: "not applied, send again later". */
export function refusal(service: Service, command: string, request: HttpRequest, random: SeededRandom): Error {
  const requestId = `chaos-${random.int(0, 1e9)}`;
  const throttled = { httpStatusCode: 400, requestId };
  const failed = { httpStatusCode: 500, requestId };
  const serverError = random.chance(0.3);
  if (service === 'sqs') {
    if (serverError)
      return new SQSServiceException({ name: 'InternalFailure', $fault: 'server', $metadata: failed, message: 'internal failure (chaos)' });
    return Object.assign(new RequestThrottled({ $metadata: throttled, message: 'rate exceeded (chaos)' }), {
      $retryable: { throttling: true },
    });
  }
  if (command === 'TransactWriteItemsCommand' && !serverError && random.chance(0.5)) {
    return transactionThrottled(request, throttled, random);
  }
  if (serverError) return new InternalServerError({ $metadata: failed, message: 'internal server error (chaos)' });
  const error: DynamoDBServiceException = new ThrottlingException({
    $metadata: throttled,
    message: 'rate of requests exceeds the allowed throughput (chaos)',
  });
  return Object.assign(error, { $retryable: { throttling: true } });
}

/** A transaction DynamoDB cancelled because one of its items was throttled: nothing written. */
function transactionThrottled(request: HttpRequest, metadata: { httpStatusCode: number; requestId: string }, random: SeededRandom): Error {
  const items = transactItemCount(request);
  const throttledItem = random.int(0, Math.max(0, items - 1));
  return new TransactionCanceledException({
    $metadata: metadata,
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons (chaos)',
    CancellationReasons: Array.from({ length: items }, (_, index) =>
      index === throttledItem ? { Code: 'ThrottlingError', Message: 'throughput exceeds the current capacity (chaos)' } : { Code: 'None' },
    ),
  });
}

function transactItemCount(request: HttpRequest): number {
  try {
    const raw: unknown = request.body;
    const text = raw instanceof Uint8Array ? new TextDecoder().decode(raw) : String(raw);
    const body = JSON.parse(text) as { TransactItems?: unknown[] };
    return body.TransactItems?.length ?? 1;
  } catch {
    return 1;
  }
}
