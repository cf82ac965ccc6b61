/**
 * The worker's memory as Lambda runs it: the worker bundle `cdk synth`
 * makes (a CronScheduler around the bench's jobs module, NodejsFunction's
 * esbuild bundle from cdk.out), loaded in a fresh Node process with no
 * TypeScript loader, the function's environment (NODE_OPTIONS
 * --enable-source-maps included) and the runtime's AWS_LAMBDA_* variables,
 * invoked once with one SQS batch of 10 work messages whose slices are due
 * at the next second (a no-op handler), against the emulator.
 *
 * The figures are that process's: resident set once loaded and after the
 * batch, its peak (`process.resourceUsage().maxRSS`) and V8's heap. Lambda's
 * "Max Memory Used" also holds the runtime's own part (the runtime interface
 * client and its buffers), which a bare Node process lacks:
 * `LAMBDA_RUNTIME_ALLOWANCE_MB` adds it before the size is chosen.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { App, Stack } from 'aws-cdk-lib';
import { bootstrap } from '../../lib/aws/bootstrap.ts';
import { destroyAwsClients } from '../../lib/aws/clients.ts';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { CronfenceError } from '../../lib/core/errors.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';
import { BENCH_NOOP } from './bench-jobs.ts';
import { chooseWorkerMemoryMb } from './cost.ts';
import { round } from './density.ts';
import { dailyJobAt, registerSchedules } from './register-schedules.ts';

/**
 * What Lambda's Node.js runtime holds beyond a bare `node` process running
 * the same code (its runtime interface client, the invoke loop's buffers):
 * a hello-world function reports about 40-60 MB more "Max Memory Used"
 * than a bare process's RSS. An allowance, not measured here (no AWS account).
 */
export const LAMBDA_RUNTIME_ALLOWANCE_MB = 50;

/** One SQS batch, as the construct's event source mapping delivers it (batchSize 10). */
export const BUNDLE_BURST_MESSAGES = 10;

export class BundleMemoryError extends CronfenceError {}

export interface WorkerBundleMemory {
  /** The bundle's size on disk (index.mjs). */
  readonly bundleKb: number;
  /** Resident set of the bare process before it imports the bundle. */
  readonly bareRssMb: number;
  /** Once the bundle is imported (the function's init). */
  readonly loadedRssMb: number;
  /** After the batch of 10. */
  readonly rssMb: number;
  /** The process's peak resident set (maxRSS). */
  readonly maxRssMb: number;
  readonly heapUsedMb: number;
  readonly heapTotalMb: number;
  readonly messages: number;
  /** Records the handler reported as failed (none expected). */
  readonly failedRecords: number;
  /** Slices of the batch that ended SUCCEEDED. */
  readonly committed: number;
  readonly invocationMs: number;
  /** maxRssMb plus the Lambda runtime's allowance: what Lambda would report as Max Memory Used. */
  readonly lambdaEstimateMb: number;
  /** The Lambda memory size chosen from that estimate with headroom (cost.ts chooseWorkerMemoryMb). */
  readonly chosenMb: number;
}

export interface BundleMemoryOptions {
  /** The installation to run against (its prefix gets its own tables and queues). */
  readonly env: NodeJS.ProcessEnv;
  readonly onProgress?: (done: number, total: number) => void;
}

const BENCH_JOBS = fileURLToPath(new URL('./bench-jobs.ts', import.meta.url));
const mb = (bytes: number): number => round(bytes / 1_048_576, 1);

export interface SynthesizedWorker {
  readonly bundle: string;
  /** The function's environment variables that are plain strings in the template (NODE_OPTIONS, settings). */
  readonly environment: Record<string, string>;
  readonly memorySize: number;
  readonly cdkOut: string;
}

/** `cdk synth` of a CronScheduler around the bench's jobs: the worker function's bundle and settings from cdk.out. */
export function synthesizeWorker(): SynthesizedWorker {
  const cdkOut = mkdtempSync(path.join(tmpdir(), 'cronfence-bundle-memory-'));
  const app = new App({ outdir: cdkOut, builtinCloudFormationValidation: false });
  const stack = new Stack(app, 'BundleMemory');
  const scheduler = new CronScheduler(stack, 'Cron', { jobs: BENCH_JOBS });
  app.synth();
  const template = JSON.parse(readFileSync(path.join(cdkOut, 'BundleMemory.template.json'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  };
  const logicalId = stack.getLogicalId(scheduler.workerFunction.node.defaultChild as never);
  const properties = template.Resources[logicalId]?.Properties as
    { Code: { S3Key: string }; Handler: string; MemorySize?: number; Environment?: { Variables: Record<string, unknown> } } | undefined;
  if (!properties) throw new BundleMemoryError(`bundle memory: the template has no worker function ${logicalId}`);
  const [file] = properties.Handler.split('.') as [string];
  const environment = Object.fromEntries(
    Object.entries(properties.Environment?.Variables ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  return {
    bundle: path.join(cdkOut, `asset.${properties.Code.S3Key.replace(/\.zip$/, '')}`, `${file}.mjs`),
    environment,
    memorySize: properties.MemorySize ?? 128,
    cdkOut,
  };
}

// The child: a bare node process (no loader), the bundle imported as the runtime imports it, one invocation.
const CHILD = `
const before = process.memoryUsage().rss;
const { handler } = await import(process.env.CRONFENCE_BUNDLE_URL);
const loaded = process.memoryUsage().rss;
process.send({ ready: true });
process.once('message', async (event) => {
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, awsRequestId: 'bundle-memory',
    getRemainingTimeInMillis: () => 60000, callbackWaitsForEmptyEventLoop: true,
  };
  const started = performance.now();
  try {
    const result = await handler(event, context);
    const invocationMs = performance.now() - started;
    const memory = process.memoryUsage();
    process.send({ before, loaded, after: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal,
      maxRssKb: process.resourceUsage().maxRSS, invocationMs, result: result ?? null });
  } catch (error) {
    process.send({ error: String(error && error.stack || error) });
  }
  process.disconnect();
});
`;

interface ChildReport {
  readonly before: number;
  readonly loaded: number;
  readonly after: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly maxRssKb: number;
  readonly invocationMs: number;
  readonly result: { batchItemFailures?: unknown[] } | null;
  readonly error?: string;
}

const sqsRecord = (message: Message, queueArn: string): Record<string, unknown> => ({
  messageId: message.MessageId ?? '',
  receiptHandle: message.ReceiptHandle ?? '',
  body: message.Body ?? '',
  attributes: {
    ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
    SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
    SenderId: '000000000000',
    ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  },
  messageAttributes: {},
  md5OfBody: message.MD5OfBody ?? '',
  eventSource: 'aws:sqs',
  eventSourceARN: queueArn,
  awsRegion: 'us-east-1',
});

/** Runs the bundle's handler once in a fresh process on `event`, once it is loaded and not before `notBefore`. */
function invokeInFreshProcess(
  bundle: string,
  env: Record<string, string>,
  event: unknown,
  timeoutMs: number,
  notBefore: number,
): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      env: { ...env, CRONFENCE_BUNDLE_URL: pathToFileURL(bundle).href },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    const timer = setTimeout(() => {
      child.kill();
      reject(new BundleMemoryError(`bundle memory: no answer from the worker bundle within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('message', (message: ChildReport & { ready?: boolean }) => {
      if (message.ready) return void setTimeout(() => child.send(event as never), Math.max(0, notBefore - Date.now()));
      clearTimeout(timer);
      if (message.error) reject(new BundleMemoryError(`bundle memory: the worker bundle failed: ${message.error}\n${stderr}`));
      else resolve(message);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new BundleMemoryError(`bundle memory: the worker bundle's process exited (${code}) before it answered\n${stderr}`));
    });
  });
}

export async function measureWorkerBundleMemory(options: BundleMemoryOptions): Promise<WorkerBundleMemory> {
  const progress = options.onProgress ?? (() => undefined);
  progress(0, 3);
  const worker = synthesizeWorker();
  progress(1, 3);
  const runtime = createRuntime({ env: options.env });
  try {
    const { config, clients } = runtime;
    const created = await bootstrap(clients, config);
    // Due at a whole second a little ahead, invoked in the second before it (when its messages surface): the worker
    // claims, waits for the second and runs, as on Lambda. Earlier than 2 s before, it would hide them again unclaimed.
    const now = Date.now();
    const dueAt = Math.ceil(now / 1000) * 1000 + 2000;
    const jobs = Array.from({ length: BUNDLE_BURST_MESSAGES }, (_, i) =>
      dailyJobAt(`memory-${i}`, dueAt, config.shardCount, BENCH_NOOP, now),
    );
    await registerSchedules(clients.dynamo, config, jobs.length, (i) => jobs[i]!);
    await runtime.workQueue.send(jobs.map((job) => ({ jobId: job.id, scheduledAt: dueAt, delaySeconds: 0, generation: job.generation })));
    const received: Message[] = [];
    for (let tries = 0; received.length < BUNDLE_BURST_MESSAGES && tries < 20; tries++) {
      const { Messages = [] } = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: created.queueUrls.work,
          MaxNumberOfMessages: BUNDLE_BURST_MESSAGES - received.length,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      received.push(...Messages);
    }
    if (received.length < BUNDLE_BURST_MESSAGES)
      throw new BundleMemoryError(`bundle memory: received ${received.length} of ${BUNDLE_BURST_MESSAGES} work messages`);
    const queueArn = `arn:aws:sqs:us-east-1:000000000000:${config.workQueueName}`;
    const event = { Records: received.map((message) => sqsRecord(message, queueArn)) };
    const functionName = `${config.prefix}-worker`;
    const passed = (names: readonly string[]): Record<string, string> =>
      Object.fromEntries(names.flatMap((name) => (options.env[name] === undefined ? [] : [[name, options.env[name]!]])));
    const env = {
      ...worker.environment,
      ...passed(Object.keys(options.env).filter((name) => name.startsWith('CRONFENCE_') || name.startsWith('AWS_'))),
      ...passed(['PATH', 'HOME']),
      AWS_REGION: options.env.AWS_REGION ?? 'us-east-1',
      AWS_ACCESS_KEY_ID: options.env.AWS_ACCESS_KEY_ID ?? 'test',
      AWS_SECRET_ACCESS_KEY: options.env.AWS_SECRET_ACCESS_KEY ?? 'test',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: functionName,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(worker.memorySize),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
      AWS_LAMBDA_LOG_STREAM_NAME: 'bundle-memory',
      LAMBDA_TASK_ROOT: path.dirname(worker.bundle),
      TZ: ':UTC',
    };
    progress(2, 3);
    const report = await invokeInFreshProcess(worker.bundle, env, event, 60_000, dueAt - 1000);
    const slices = await Promise.all(jobs.map((job) => runtime.slices.get({ jobId: job.id, scheduledAt: dueAt })));
    const maxRssMb = mb(report.maxRssKb * 1024);
    const lambdaEstimateMb = round(maxRssMb + LAMBDA_RUNTIME_ALLOWANCE_MB, 1);
    progress(3, 3);
    return {
      bundleKb: Math.round(statSync(worker.bundle).size / 1024),
      bareRssMb: mb(report.before),
      loadedRssMb: mb(report.loaded),
      rssMb: mb(report.after),
      maxRssMb,
      heapUsedMb: mb(report.heapUsed),
      heapTotalMb: mb(report.heapTotal),
      messages: received.length,
      failedRecords: report.result?.batchItemFailures?.length ?? 0,
      committed: slices.filter((slice) => slice?.status === 'SUCCEEDED').length,
      invocationMs: Math.round(report.invocationMs),
      lambdaEstimateMb,
      chosenMb: chooseWorkerMemoryMb(lambdaEstimateMb),
    };
  } finally {
    destroyAwsClients(runtime.clients);
    rmSync(worker.cdkOut, { recursive: true, force: true });
  }
}
