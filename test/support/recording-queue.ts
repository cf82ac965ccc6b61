/**
 * What a scan sends, for tests: under the lean model a scan writes no slice
 * (the claim creates it from the message's definition), so its work shows
 * only in the messages it sends.
 */
import type { Clock } from '../../lib/core/clock.ts';
import { encodeWorkMessage } from '../../lib/core/messages.ts';
import type { WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import type { HandlerRegistry } from '../../lib/engine/define-job.ts';
import type { Disposition, Worker } from '../../lib/engine/worker.ts';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.ts';
import type { TestInstallation } from './harness.ts';

/** Keeps every message sent through it, and passes them on to `inner` when given (else they go nowhere). */
export class RecordingQueue implements WorkQueue {
  readonly sent: WorkMessage[] = [];

  constructor(private readonly inner?: WorkQueue) {}

  async send(messages: readonly WorkMessage[]): Promise<void> {
    this.sent.push(...messages);
    await this.inner?.send(messages);
  }

  async hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    await this.inner?.hide(receiptHandle, seconds, signal);
  }

  async hideBatched(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    await this.inner?.hideBatched(receiptHandle, seconds, signal);
  }

  /** The messages sent from now on (call `take` on what it returns after the sends). */
  mark(): { take: () => WorkMessage[] } {
    const from = this.sent.length;
    return { take: () => this.sent.slice(from) };
  }
}

/**
 * A runtime on the installation's tables whose work queue records what is
 * sent: passed on to the real queue with `forward`, else kept only (a
 * worker's hides then go nowhere, so messages can be handed to it directly).
 */
export function recordingRuntime(
  installation: TestInstallation,
  options: { clock?: Clock; forward?: boolean } = {},
): { runtime: Runtime; queue: RecordingQueue } {
  let queue: RecordingQueue | undefined;
  const runtime = createRuntime({
    env: installation.env,
    clock: options.clock,
    sinks: [installation.events],
    decoratePorts: (ports) => ({ ...ports, workQueue: (queue = new RecordingQueue(options.forward ? ports.workQueue : undefined)) }),
  });
  if (queue === undefined) throw new Error('createRuntime did not build a work queue');
  return { runtime, queue };
}

/**
 * Hands each message to `worker` as a new delivery, one after another in the
 * order given, as a runtime from `recordingRuntime` without `forward` would
 * receive them. @returns each one's disposition.
 */
export async function processInOrder(worker: Worker, messages: readonly WorkMessage[]): Promise<Disposition[]> {
  const dispositions: Disposition[] = [];
  for (const message of messages) {
    // Every delivery its own message id, as SQS gives each message sent.
    const id = `message-${++deliveries}`;
    dispositions.push(
      await worker.process({ body: encodeWorkMessage(message), receiptHandle: `receipt-${id}`, messageId: id, receiveCount: 1 }),
    );
  }
  return dispositions;
}

let deliveries = 0;

/** Hands `messages` to a worker of `runtime` with `handlers`. */
export function deliverInOrder(
  runtime: Runtime,
  handlers: HandlerRegistry,
  messages: readonly WorkMessage[],
  workerId = 'w1',
): Promise<Disposition[]> {
  return processInOrder(runtime.worker(workerId, handlers), messages);
}
