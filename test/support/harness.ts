/**
 * An isolated cronfence installation per test file: a unique resource prefix
 * on the shared emulator (started by test/setup/global-emulator.ts), real SDK
 * clients over HTTP, and a recording event sink.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { bootstrap, type BootstrapResult } from '../../lib/aws/bootstrap.ts';
import { longPollRequestTimeoutMs } from '../../lib/aws/clients.ts';
import type { Clock } from '../../lib/core/clock.ts';
import { RecordingEventSink } from '../../lib/core/events.ts';
import { createRuntime, type Runtime } from '../../lib/lambda/wiring.ts';
import { awsEndpoint } from './aws-endpoint.ts';

export interface TestInstallation {
  readonly runtime: Runtime;
  readonly events: RecordingEventSink;
  readonly prefix: string;
  readonly env: Record<string, string | undefined>;
  readonly resources: BootstrapResult;
  /** Messages now visible on a queue (received, so hidden for `visibilitySeconds`). */
  receive(queueUrl: string, max?: number, visibilitySeconds?: number): Promise<Message[]>;
  /**
   * Waits for at least one message. A stopped poller's long poll can still be
   * open on the server and take a message (hiding it for the visibility timeout).
   */
  receiveSome(queueUrl: string, max?: number, timeoutMs?: number): Promise<Message[]>;
  /** Visible + in flight + delayed messages on a queue (approximate, as SQS reports). */
  depth(queueUrl: string): Promise<number>;
  destroy(): void;
}

export async function createTestInstallation(options: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestInstallation> {
  awsEndpoint(); // fails loudly when no emulator was started
  const prefix = `t${randomUUID().slice(0, 8)}`;
  const env = { ...process.env, CRONFENCE_PREFIX: prefix, CRONFENCE_SHARDS: '1', ...options.env };
  const events = new RecordingEventSink();
  const runtime = createRuntime({ env, sinks: [events], clock: options.clock });
  const resources = await bootstrap(runtime.clients, runtime.config);
  const sqs = runtime.clients.sqs;
  const installation: TestInstallation = {
    runtime,
    events,
    prefix,
    env,
    resources,
    async receive(queueUrl, max = 10, visibilitySeconds = 30) {
      const result = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 1,
          VisibilityTimeout: visibilitySeconds,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
        { requestTimeout: longPollRequestTimeoutMs(1) },
      );
      return result.Messages ?? [];
    },
    async receiveSome(queueUrl, max = 10, timeoutMs = 15_000) {
      return eventually(
        async () => {
          const messages = await installation.receive(queueUrl, max);
          return messages.length > 0 ? messages : undefined;
        },
        timeoutMs,
        0,
      );
    },
    async depth(queueUrl) {
      // The three counts are computed one after another; a message whose delay ends in between is
      // counted twice or not at all. Read until two readings agree.
      const read = async (): Promise<number> => {
        const result = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: queueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
          }),
        );
        const a = result.Attributes ?? {};
        return (
          Number(a.ApproximateNumberOfMessages ?? 0) +
          Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
          Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
        );
      };
      let previous = await read();
      for (;;) {
        const current = await read();
        if (current === previous) return current;
        previous = current;
      }
    },
    destroy() {
      runtime.clients.dynamo.destroy();
      runtime.clients.sqs.destroy();
      runtime.clients.events.destroy();
    },
  };
  return installation;
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | undefined;
    try {
      value = await check();
    } catch (error) {
      // A poll's read that timed out (its SDK tries spent on a busy emulator, seen in CI) is polled again; any other
      // error, or a timeout at the deadline, fails the wait.
      if ((error as Error | undefined)?.name !== 'TimeoutError' || Date.now() > deadline) throw error;
    }
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
