/**
 * Lambda: the work queue's consumer (SQS event source, ReportBatchItemFailures),
 * running the example handlers of lib/example-jobs/index.ts. A CronScheduler
 * given `jobs` generates its own entry like this one around your module.
 */
import { createJobsWorker } from '../lib/lambda/entries.ts';
import { registry } from '../lib/example-jobs/index.ts';

export const handler = createJobsWorker(registry);
