/**
 * How late the SQS in use releases delayed and re-visible messages: the two
 * timers cronfence's start lag and failover rest on.
 *
 *   npx tsx scripts/sqs-timing.ts [--rounds 10] [--json]
 *   CRONFENCE_EMULATOR=localstack npx tsx scripts/sqs-timing.ts
 *
 * The endpoint: AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_SQS when set, else the
 * emulator profile CRONFENCE_EMULATOR names, started for the run (moto by
 * default). Each round, one message per measure, on a queue of its own:
 * - delay: sent with DelaySeconds 2; lateness = received - (sent + 2 s).
 * - visibility: received with VisibilityTimeout 1; lateness = received again
 *   - (first receive's reply + 1 s).
 * - heartbeat: a received message's visibility changed to 3 s (what a
 *   worker's heartbeat does); lateness = received again - (change's reply + 3 s):
 *   how much later than the lease a dead worker's slice resurfaces.
 * - orphanedPoll: a child process opens a long poll (2 s, as the local
 *   poller's were until it moved to 1 s: test/integration/orphaned-poll.test.ts)
 *   and is SIGKILLed 0.5 s later; then a message is sent;
 *   lateness = received - sent. The server does not know the
 *   poller is gone: if the dead poll takes the message, it comes back only
 *   after the queue's visibility timeout (3 s here, as the work queue's).
 * Rounds start at random sub-second offsets, so a server-side timer's phase
 * shows as spread rather than as one value. Long polls (WaitTimeSeconds 10) throughout.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { distribution } from '../lib/core/stats.ts';
import { createAwsClients, destroyAwsClients } from '../lib/aws/clients.ts';
import { ensureAwsEndpoint } from '../lib/local/emulator.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '10' }, json: { type: 'boolean', default: false }, 'orphan-poll': { type: 'string' } },
});
if (values['orphan-poll']) {
  // The child of orphanedPollRound: endpoints come from the parent's environment.
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  const client = new SQSClient({ region: process.env.AWS_REGION ?? 'us-east-1' });
  // 2 s, as the local poller's (lib/local/sqs-poller.ts): how long a killed replica's poll lingers.
  const polling = client.send(new ReceiveMessageCommand({ QueueUrl: values['orphan-poll'], WaitTimeSeconds: 2 }));
  process.send?.('polling');
  await polling;
  process.exit(0);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);

const aws = await ensureAwsEndpoint();
const clients = createAwsClients();
const sqs = clients.sqs;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function receiveOne(queueUrl: string, visibilityTimeout: number): Promise<{ message: Message; at: number }> {
  for (;;) {
    const result = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 10, MaxNumberOfMessages: 1, VisibilityTimeout: visibilityTimeout }),
    );
    const message = result.Messages?.[0];
    if (message) return { message, at: Date.now() };
  }
}

async function delayRound(queueUrl: string): Promise<number> {
  const sentAt = Date.now();
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'delay', DelaySeconds: 2 }));
  const { message, at } = await receiveOne(queueUrl, 30);
  await sqs
    .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 }))
    .catch(() => {});
  await drain(queueUrl);
  return at - (sentAt + 2000);
}

async function visibilityRound(queueUrl: string): Promise<number> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'visibility' }));
  const first = await receiveOne(queueUrl, 1);
  const again = await receiveOne(queueUrl, 30);
  await drain(queueUrl, again.message);
  return again.at - (first.at + 1000);
}

async function heartbeatRound(queueUrl: string): Promise<number> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'heartbeat' }));
  const { message } = await receiveOne(queueUrl, 30);
  await sleep(Math.random() * 1000);
  await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 3 }));
  const changedAt = Date.now();
  const again = await receiveOne(queueUrl, 30);
  await drain(queueUrl, again.message);
  return again.at - (changedAt + 3000);
}

async function orphanedPollRound(queueUrl: string): Promise<number> {
  const child = fork(fileURLToPath(import.meta.url), ['--orphan-poll', queueUrl], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise((resolve) => child.once('message', resolve));
  await sleep(500); // its ReceiveMessage is open on the server by now
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  const sentAt = Date.now();
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'orphaned-poll' }));
  const again = await receiveOne(queueUrl, 30);
  await drain(queueUrl, again.message);
  return again.at - sentAt;
}

/** Deletes what a round left behind, so the next round's receive finds only its own message. */
async function drain(queueUrl: string, message?: Message): Promise<void> {
  if (message) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
  for (;;) {
    const result = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0, MaxNumberOfMessages: 10 }));
    if (!result.Messages?.length) return;
    for (const left of result.Messages) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: left.ReceiptHandle }));
  }
}

const measures = { delay: delayRound, visibility: visibilityRound, heartbeat: heartbeatRound, orphanedPoll: orphanedPollRound } as const;
const queues: string[] = [];
try {
  const results: Record<string, ReturnType<typeof distribution> & { min: number; samplesMs: number[] }> = {};
  for (const [name, round] of Object.entries(measures)) {
    const created = await sqs.send(
      new CreateQueueCommand({ QueueName: `sqs-timing-${name}-${process.pid}`, Attributes: { VisibilityTimeout: '3' } }),
    );
    const queueUrl = created.QueueUrl!;
    queues.push(queueUrl);
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      await sleep(Math.random() * 1000);
      samples.push(await round(queueUrl));
    }
    results[name] = { min: Math.min(...samples), ...distribution(samples), samplesMs: samples };
  }
  const endpoint = process.env.AWS_ENDPOINT_URL_SQS ?? aws.endpoint ?? 'AWS';
  if (values.json) {
    console.log(JSON.stringify({ endpoint, rounds, lateMs: results }, null, 2));
  } else {
    console.log(`SQS at ${endpoint}, ${rounds} rounds each; lateness in ms (min / p50 / max):`);
    for (const [name, d] of Object.entries(results)) console.log(`  ${name.padEnd(12)} ${d.min} / ${d.p50} / ${d.max}`);
  }
} finally {
  for (const queueUrl of queues) await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => {});
  destroyAwsClients(clients);
  await aws.stop();
}
