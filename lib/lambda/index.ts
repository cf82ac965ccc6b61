/**
 * `cronfence/lambda`: the Lambda side. Ready handlers (`createJobsWorker`,
 * `createScanner`, `createTick`), the factories over a Runtime they are built
 * from, and the jobs-module reader.
 */
export { createJobsWorker, createOutboxDispatcher, createScanner, createTick } from './entries.ts';
export { EngineMetrics, lambdaMetrics, type LambdaMetrics, type MeteredRuntimeOptions } from './emf-metrics.ts';
export {
  InvalidJobsModuleError,
  jobsFromModule,
  tableDefinition,
  type JobsModule,
  type JobsModuleExports,
  type LocalTable,
} from './jobs-module.ts';
export {
  createScannerHandler,
  createTickHandler,
  createWorkerHandler,
  type HandlerLog,
  type ScannerHandlerOptions,
  type SqsHandler,
} from './handlers.ts';
export { createOutboxHandler, type OutboxHandlerOptions } from './outbox-handler.ts';
export { createRuntime, type Runtime, type RuntimeOptions } from './wiring.ts';
export { loadConfig, type CronfenceConfig } from '../aws/config.ts';
