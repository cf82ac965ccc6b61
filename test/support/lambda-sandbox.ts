/**
 * One Lambda execution environment for a bundle from cdk.out: a worker
 * thread with the function's own process.env (the template's variables, the
 * runtime's AWS_LAMBDA_* ones, the endpoint of its recording proxy), the
 * bundle imported as the runtime imports it (the handler module's export),
 * and one invocation at a time with a context object as AWS documents it.
 * Its stdout and stderr (the Powertools log lines and EMF) are kept for the
 * failure message.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { LambdaFunctionSpec } from './cfn-template.ts';
import { ACCOUNT, REGION } from './cfn-template.ts';

// Runs inside the thread. `clockOffsetMs` moves this environment's clock (Date.now) alone: the dead-man's minute.
const ENTRY = `
const { parentPort, workerData } = require('node:worker_threads');
const { bundleUrl, handlerName, functionName, memorySize, timeoutMs, logGroup, logStream, clockOffsetMs } = workerData;
if (clockOffsetMs) { const realNow = Date.now; Date.now = () => realNow() + clockOffsetMs; }
const loaded = import(bundleUrl);
parentPort.on('message', async ({ id, event }) => {
  try {
    const handler = (await loaded)[handlerName];
    if (typeof handler !== 'function') throw new Error('the bundle exports no ' + handlerName);
    const deadline = Date.now() + timeoutMs;
    const context = {
      functionName, functionVersion: '$LATEST', memoryLimitInMB: String(memorySize),
      invokedFunctionArn: 'arn:aws:lambda:${REGION}:${ACCOUNT}:function:' + functionName,
      awsRequestId: id, logGroupName: logGroup, logStreamName: logStream, callbackWaitsForEmptyEventLoop: true,
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done() {}, fail() {}, succeed() {},
    };
    const result = await handler(event, context);
    parentPort.postMessage({ id, result: result === undefined ? null : result });
  } catch (error) {
    parentPort.postMessage({ id, error: { name: error?.name, message: String(error?.message ?? error), stack: error?.stack } });
  }
});
`;

export class InvocationError extends Error {
  constructor(
    readonly fn: string,
    readonly errorName: string,
    message: string,
  ) {
    super(`${fn}: ${errorName}: ${message}`);
  }
}

export class LambdaSandbox {
  private readonly worker: Worker;
  private readonly pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly output: string[] = [];
  private busy = Promise.resolve();

  constructor(
    readonly spec: LambdaFunctionSpec,
    endpoint: string,
    options: { clockOffsetMs?: number } = {},
  ) {
    const logGroup = `/aws/lambda/${spec.name}`;
    const logStream = `2026/12/06/[$LATEST]${randomUUID().replace(/-/g, '')}`;
    this.worker = new Worker(ENTRY, {
      eval: true,
      stdout: true,
      stderr: true,
      workerData: {
        bundleUrl: pathToFileURL(spec.bundle).href,
        handlerName: spec.handler,
        functionName: spec.name,
        memorySize: spec.memorySize,
        timeoutMs: spec.timeoutSeconds * 1000,
        logGroup,
        logStream,
        clockOffsetMs: options.clockOffsetMs ?? 0,
      },
      env: {
        ...spec.environment,
        AWS_REGION: REGION,
        AWS_DEFAULT_REGION: REGION,
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_SESSION_TOKEN: 'test',
        AWS_ENDPOINT_URL: endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: endpoint,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
        AWS_LAMBDA_FUNCTION_NAME: spec.name,
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memorySize),
        AWS_LAMBDA_LOG_GROUP_NAME: logGroup,
        AWS_LAMBDA_LOG_STREAM_NAME: logStream,
        LAMBDA_TASK_ROOT: path.dirname(spec.bundle),
        TZ: ':UTC',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    for (const stream of [this.worker.stdout, this.worker.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        this.output.push(chunk);
        if (this.output.length > 400) this.output.splice(0, 100);
      });
    }
    this.worker.on('message', ({ id, result, error }: { id: string; result?: unknown; error?: { name: string; message: string } }) => {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (error) waiting?.reject(new InvocationError(this.spec.name, error.name, error.message));
      else waiting?.resolve(result);
    });
    this.worker.on('error', (error) => {
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    });
  }

  /** One invocation; a second waits for the first, as in one execution environment. */
  invoke<T = unknown>(event: unknown): Promise<T> {
    const run = this.busy.then(
      () =>
        new Promise<T>((resolve, reject) => {
          const id = randomUUID();
          this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
          // Through JSON, as Lambda delivers an event: no Dates, no functions, no undefined.
          this.worker.postMessage({ id, event: JSON.parse(JSON.stringify(event)) as unknown });
        }),
    );
    this.busy = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The environment's log output so far (for failure messages). */
  log(lines = 40): string {
    return this.output.join('').split('\n').slice(-lines).join('\n');
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
