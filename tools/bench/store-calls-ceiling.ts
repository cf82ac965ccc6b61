/**
 * A second ceiling, beside the plain writes of ceiling.ts: the store calls a
 * burst's slice makes, without the engine. For each slice, through the
 * engine's own store functions: the job read (for each 10, one BatchGetItem,
 * as a worker's batch reads them: coalesced-job-reader.ts), the claim that
 * creates it (a conditional PutItem) and the commit (a conditional
 * UpdateItem); for each 10, the SQS batches around them (send, receive, the
 * claim's visibility change, delete). From one process, as many batches in
 * flight as the burst's workers had.
 *
 * The emulator serves DynamoDB one request at a time and prices request kinds
 * very differently (moto: a put ~2 ms, an update ~7 ms): burst ÷ this is the
 * share the engine's protocol leaves (processes, queue delays, the wait for
 * the second, leases); this ÷ plain writes is what the request kinds cost here.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { destroyAwsClients } from '../../lib/aws/clients.ts';
import { CoalescedJobReader } from '../../lib/aws/dynamo/coalesced-job-reader.ts';
import { CronfenceError } from '../../lib/core/errors.ts';
import { definitionOf } from '../../lib/core/job-record.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';
import { BENCH_NOOP } from './bench-jobs.ts';
import { round } from './density.ts';
import { dailyJobAt, registerSchedules } from './register-schedules.ts';

export interface StoreCallsCeilingOptions {
  /** The burst's installation (its tables exist). */
  readonly env: NodeJS.ProcessEnv;
  readonly slices: number;
  /** SQS batches of 10 slices in flight at once (the burst's workers × their batches). */
  readonly batchesInFlight: number;
  readonly onProgress: (done: number, total: number) => void;
}

export interface StoreCallsCeiling {
  readonly slices: number;
  readonly batchesInFlight: number;
  readonly seconds: number;
  readonly slicesPerSecond: number;
}

const BATCH = 10;
/** Two days out: no scan of the burst's installation reaches these jobs' slices. */
const DUE_IN_MS = 2 * 86_400_000;

export async function measureStoreCallsCeiling(options: StoreCallsCeilingOptions): Promise<StoreCallsCeiling> {
  const runtime = createRuntime({ env: options.env });
  try {
    const { dynamo, sqs } = runtime.clients;
    const now = Date.now();
    const dueAt = Math.ceil((now + DUE_IN_MS) / 1000) * 1000;
    const jobs = Array.from({ length: options.slices }, (_, i) =>
      dailyJobAt(`calls-${i}`, dueAt, runtime.config.shardCount, BENCH_NOOP, now),
    );
    await registerSchedules(dynamo, runtime.config, jobs.length, (i) => jobs[i]!);
    const { QueueUrl: queueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: `${runtime.config.workQueueName}-calls`, Attributes: { VisibilityTimeout: '30' } }),
    );
    const owner = 'store-calls';
    const jobReader = new CoalescedJobReader(runtime.jobReader);
    let next = 0;
    let done = 0;
    const started = performance.now();
    const lane = async (): Promise<void> => {
      while (next < jobs.length) {
        const batch = jobs.slice(next, (next += BATCH));
        await sqs.send(
          new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((job, j) => ({ Id: String(j), MessageBody: job.id })) }),
        );
        const received =
          (await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: BATCH, WaitTimeSeconds: 0 }))).Messages ??
          [];
        const handles = received.map((message, j) => ({ Id: String(j), ReceiptHandle: message.ReceiptHandle ?? '' }));
        if (handles.length > 0)
          await sqs.send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: queueUrl,
              Entries: handles.map((entry) => ({ ...entry, VisibilityTimeout: 5 })),
            }),
          );
        await Promise.all(
          batch.map(async (job) => {
            const key = { jobId: job.id, scheduledAt: dueAt };
            await jobReader.record(job.id);
            const claim = await runtime.slices.claim(key, owner, Date.now(), `calls-${job.id}`, 1, definitionOf(job));
            if (!claim.won) throw new CronfenceError(`store-calls ceiling: the claim of ${job.id} lost (its slice existed already)`);
            await runtime.slices.commit({ key, fence: claim.slice.fence, owner }, Date.now(), []);
          }),
        );
        if (handles.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: handles }));
        done += batch.length;
        options.onProgress(done, jobs.length);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.batchesInFlight) }, lane));
    const seconds = (performance.now() - started) / 1000;
    return {
      slices: jobs.length,
      batchesInFlight: options.batchesInFlight,
      seconds: round(seconds, 2),
      slicesPerSecond: round(jobs.length / Math.max(0.001, seconds), 1),
    };
  } finally {
    destroyAwsClients(runtime.clients);
  }
}
