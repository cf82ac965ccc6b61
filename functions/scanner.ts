/** Lambda: the scan queue's consumer (SQS event source, ReportBatchItemFailures). */
import { randomUUID } from 'node:crypto';
import { createScannerHandler } from '../lib/runtime/handlers.ts';
import { createRuntime } from '../lib/runtime/wiring.ts';
import { functionLogger } from './logger.ts';

const log = functionLogger('cronfence-scanner');
const runtime = createRuntime({ onError: (error, context) => log.error(context, { error: String(error) }) });

export const handler = createScannerHandler(runtime, `scanner-${process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? randomUUID()}`, log, {
  scanBudgetMs: Number(process.env.CRONFENCE_SCAN_BUDGET_MS ?? 20_000),
});
