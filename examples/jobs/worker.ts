/**
 * Lambda: the work queue's consumer running the example handlers (index.ts), for the repository's own CDK app
 * (app/settlement-stack.ts, `workerEntry`). A CronScheduler given `jobs` generates its own entry like this one around
 * your module.
 */
import { createJobsWorker } from '../../lib/lambda/entries.ts';
import { registry } from './index.ts';

export const handler = createJobsWorker(registry);
