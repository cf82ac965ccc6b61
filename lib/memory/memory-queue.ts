/**
 * The WorkQueue and DeadLetterSink ports in memory, with SQS's timing by an
 * injected Clock (the queue's clock, which need not be any worker's):
 * - `send` with DelaySeconds (0 to 900) surfaces a message that much later;
 * - `receive` takes visible messages and hides each for the visibility
 *   timeout, under a new receipt handle;
 * - `hide` (ChangeMessageVisibility) and `delete` accept any receipt handle
 *   the message was ever received with, and `hide` applies whether or not
 *   the message is in flight: the emulator (moto) does exactly that
 *   (test/contract/work-queue.contract.ts pins it). Whether AWS refuses a
 *   stale handle or not, the engine must not depend on it: a zombie's late
 *   hide can delay a takeover (a lease hides only after a renewal
 *   held), and tests over this queue see that worst case;
 * - a handle no receive ever gave is ignored (the SQS adapter ignores
 *   ReceiptHandleIsInvalid);
 * - a send with a body SQS refuses (a character outside its ranges, over
 *   256 KiB: core/sqs-body.ts) fails whole and queues nothing, as SQS does
 *   and the emulator does not;
 * - `sendBody` puts any body SQS takes on the queue, as a producer other than
 *   cronfence's scanners may (a forged or garbled message).
 */
import type { Clock } from '../core/clock.ts';
import { CronfenceError } from '../core/errors.ts';
import { sqsBodyProblem } from '../core/sqs-body.ts';
import { decodeWorkMessage, encodeWorkMessage } from '../core/messages.ts';
import type { DeadLetterRecord, DeadLetterSink, WorkMessage, WorkQueue } from '../core/ports.ts';
import type { SliceKey } from '../core/slice.ts';

const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 43_200;
/** The work queue's visibility timeout as the schema deploys it (lib/aws/schema.ts WORK_QUEUE). */
const DEFAULT_VISIBILITY_SECONDS = 3;

export interface QueuedMessage {
  readonly messageId: string;
  readonly body: string;
  /** Queue-clock instant it is (or becomes) visible. */
  visibleAt: number;
  /** The latest receive's handle; undefined before the first receive. */
  receiptHandle?: string;
  /** Every handle a receive gave it (the latest included). */
  readonly receiptHandles: Set<string>;
  receiveCount: number;
}

export interface ReceivedWorkMessage {
  readonly body: string;
  readonly receiptHandle: string;
  readonly messageId: string;
  /** 1 on the first delivery. */
  readonly receiveCount: number;
}

export class InMemoryWorkQueue implements WorkQueue {
  private readonly queued: QueuedMessage[] = [];
  private sent = 0;

  constructor(private readonly clock: Clock) {}

  async send(messages: readonly WorkMessage[]): Promise<void> {
    const bodies = messages.map((message) => encodeWorkMessage(message));
    for (const body of bodies) assertSendable(body);
    for (const [index, message] of messages.entries()) this.enqueue(bodies[index] as string, message.delaySeconds);
  }

  /** SendMessage with a body of the caller's: whatever SQS takes, whether cronfence can read it or not. */
  async sendBody(body: string, delaySeconds = 0): Promise<void> {
    assertSendable(body);
    this.enqueue(body, delaySeconds);
  }

  private enqueue(body: string, delaySeconds = 0): void {
    this.sent++;
    this.queued.push({
      messageId: `message-${this.sent}`,
      body,
      visibleAt: this.clock.now() + clampSeconds(delaySeconds, MAX_DELAY_SECONDS) * 1000,
      receiptHandles: new Set(),
      receiveCount: 0,
    });
  }

  /** No request to share in memory: the same as `hide`. */
  hideBatched(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    return this.hide(receiptHandle, seconds, signal);
  }

  /** Applied at once: a signal already aborted abandons it, as it would a request not yet sent. */
  async hide(receiptHandle: string, seconds: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const now = this.clock.now();
    const message = this.queued.find((candidate) => candidate.receiptHandles.has(receiptHandle));
    if (message === undefined) return;
    message.visibleAt = now + clampSeconds(Math.ceil(seconds), MAX_VISIBILITY_SECONDS) * 1000;
  }

  /** Messages visible at `now`, oldest first, each hidden for `visibilitySeconds` from `now`. */
  receive(now = this.clock.now(), options: { max?: number; visibilitySeconds?: number } = {}): ReceivedWorkMessage[] {
    const visible = this.queued.filter((message) => message.visibleAt <= now).sort((a, b) => a.visibleAt - b.visibleAt);
    return visible.slice(0, options.max ?? 10).map((message) => {
      message.receiveCount++;
      message.receiptHandle = `${message.messageId}#${message.receiveCount}`;
      message.receiptHandles.add(message.receiptHandle);
      message.visibleAt = now + (options.visibilitySeconds ?? DEFAULT_VISIBILITY_SECONDS) * 1000;
      return { body: message.body, receiptHandle: message.receiptHandle, messageId: message.messageId, receiveCount: message.receiveCount };
    });
  }

  /** When the next message hidden or delayed at `now` becomes visible: how long a long poll waits before it could return one. */
  nextVisibleAfter(now: number): number | undefined {
    let next: number | undefined;
    for (const message of this.queued)
      if (message.visibleAt > now && (next === undefined || message.visibleAt < next)) next = message.visibleAt;
    return next;
  }

  /** @returns false when no message on the queue was ever received with this handle (it is gone). */
  delete(receiptHandle: string): boolean {
    const index = this.queued.findIndex((message) => message.receiptHandles.has(receiptHandle));
    if (index < 0) return false;
    this.queued.splice(index, 1);
    return true;
  }

  /** The body of every message still on the queue, readable or not. */
  bodies(): string[] {
    return this.queued.map((message) => message.body);
  }

  /** The body of the message a receive gave `receiptHandle` for, while it is on the queue. */
  bodyOf(receiptHandle: string): string | undefined {
    return this.queued.find((message) => message.receiptHandles.has(receiptHandle))?.body;
  }

  /**
   * Every message still on the queue (visible, in flight or delayed), with the slice it names; for assertions.
   * @throws {MalformedMessageError} when a body put there with `sendBody` is not a work message.
   */
  messages(): (Readonly<QueuedMessage> & { readonly key: SliceKey })[] {
    return this.queued.map((message) => ({
      ...message,
      receiptHandles: new Set(message.receiptHandles),
      key: decodeWorkMessage(message.body),
    }));
  }

  /** How many messages were ever sent. */
  get sentCount(): number {
    return this.sent;
  }
}

export interface RejectedMessage {
  readonly body: string;
  readonly reason: string;
  readonly kind: 'malformed-message' | 'unrunnable-message';
}

export class InMemoryDeadLetterSink implements DeadLetterSink {
  readonly records: DeadLetterRecord[] = [];
  readonly rejected: RejectedMessage[] = [];

  async send(record: DeadLetterRecord): Promise<void> {
    this.records.push(structuredClone(record));
  }

  /** A message cronfence could not read or run (what SqsDeadLetterSink.sendRejected keeps). */
  async sendRejected(body: string, reason: string, kind: RejectedMessage['kind']): Promise<void> {
    this.rejected.push({ body, reason, kind });
  }
}

function clampSeconds(seconds: number, max: number): number {
  return Math.min(max, Math.max(0, Math.floor(seconds)));
}

/** SQS refuses the whole send: a character outside its ranges, over 256 KiB. */
function assertSendable(body: string): void {
  const problem = sqsBodyProblem(body);
  if (problem !== undefined) throw new CronfenceError(`InvalidMessageContents: the message body ${problem}`);
}
