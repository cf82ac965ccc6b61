/** Lambda: the work queue's consumer (SQS event source, ReportBatchItemFailures). */
import { randomUUID } from 'node:crypto';
import { createWorkerHandler } from '../lib/runtime/handlers.ts';
import { createRuntime } from '../lib/runtime/wiring.ts';
import { registry } from './jobs/index.ts';
import { functionLogger } from './logger.ts';

const log = functionLogger('cronfence-worker');
const runtime = createRuntime({ onError: (error, context) => log.error(context, { error: String(error) }) });

export const handler = createWorkerHandler(runtime, `worker-${process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? randomUUID()}`, registry, log);
