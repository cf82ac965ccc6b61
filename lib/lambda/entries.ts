/**
 * Ready Lambda handlers over the production runtime (configuration from the
 * environment the construct sets, a Powertools logger). functions/*.ts are
 * one line each over these; a custom worker entry is too:
 *
 * ```ts
 * import { createJobsWorker } from 'cronfence/lambda';
 * import * as jobs from './cron-jobs';
 * export const handler = createJobsWorker(jobs);
 * ```
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { HandlerRegistry } from '../engine/define-job.ts';
import { createScannerHandler, createTickHandler, createWorkerHandler, type SqsHandler } from './handlers.ts';
import { createRuntime, type Runtime } from './wiring.ts';
import { lambdaMetrics, type LambdaMetrics } from './emf-metrics.ts';
import { jobsFromModule, type JobsModuleExports } from './jobs-module.ts';
import { createOutboxHandler } from './outbox-handler.ts';
import type { DispatchPass } from '../engine/outbox-dispatcher.ts';

/** One outbox invocation's dispatching time: under the construct's 60 s function timeout. */
export const OUTBOX_BUDGET_MS = 50_000;

function productionRuntime(log: Logger, metrics: LambdaMetrics): Runtime {
  return createRuntime({ onError: (error, context) => log.error(context, { error: String(error) }), ...metrics.runtimeOptions() });
}

/** This invocation environment's worker or scanner id (a Lambda's log stream is one sandbox). */
function instanceId(role: string): string {
  return `${role}-${process.env.AWS_LAMBDA_LOG_STREAM_NAME ?? randomUUID()}`;
}

/**
 * The worker Lambda for a jobs module (or a registry): what the construct's
 * generated worker entry exports as `handler`.
 * @throws {InvalidJobsModuleError} when the module exports no handlers.
 */
export function createJobsWorker(jobs: JobsModuleExports | HandlerRegistry, options: { serviceName?: string } = {}): SqsHandler {
  const { registry } = jobsFromModule(jobs);
  const log = new Logger({ serviceName: options.serviceName ?? 'cronfence-worker' });
  const metrics = lambdaMetrics();
  return metrics.flushAfter(createWorkerHandler(productionRuntime(log, metrics), instanceId('worker'), registry, log));
}

/** The scanner Lambda. `CRONFENCE_SCAN_BUDGET_MS` (default 20000) bounds one scan. */
export function createScanner(): SqsHandler {
  const log = new Logger({ serviceName: 'cronfence-scanner' });
  const metrics = lambdaMetrics();
  const runtime = productionRuntime(log, metrics);
  return metrics.flushAfter(createScannerHandler(runtime, instanceId('scanner'), log, { scanBudgetMs: runtime.config.scanBudgetMs }));
}

/** The tick Lambda (the per-minute rule's target). */
export function createTick(): () => Promise<{ shards: number; staleJobs?: number }> {
  const log = new Logger({ serviceName: 'cronfence-tick' });
  const metrics = lambdaMetrics();
  return metrics.flushAfter(createTickHandler(productionRuntime(log, metrics), log));
}

/**
 * The outbox dispatcher Lambda (the construct's per-minute `OutboxRule`
 * target): delivers due outbound requests for up to 50 s (under its 60 s
 * timeout), then returns; the next invocation carries on.
 */
export function createOutboxDispatcher(): () => Promise<DispatchPass> {
  const log = new Logger({ serviceName: 'cronfence-outbox' });
  const metrics = lambdaMetrics();
  return metrics.flushAfter(createOutboxHandler(productionRuntime(log, metrics), log, { budgetMs: OUTBOX_BUDGET_MS }));
}
