/**
 * Lambda: the work queue's consumer (SQS event source, ReportBatchItemFailures),
 * running the example handlers of functions/jobs/index.ts. A CronScheduler
 * given `jobs` generates its own entry like this one around your module.
 */
import { createJobsWorker } from '../lib/lambda/entries.ts';
import { registry } from './jobs/index.ts';

export const handler = createJobsWorker(registry);
