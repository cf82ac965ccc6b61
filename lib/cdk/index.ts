/** `cronfence/cdk`: the CDK construct library (`import { CronScheduler } from 'cronfence/cdk'`). */
export { CronScheduler, WORKER_TIMEOUT_SLACK } from './cron-scheduler.ts';
export type { AddJobOptions, CronSchedulerAlarmProps, CronSchedulerBatchProps, CronSchedulerProps } from './props.ts';
export { ScheduledJob, JOB_RESOURCE_TYPE, jobResourceProperties, type JobResourceProperties } from './scheduled-job.ts';
export { SchedulerAlarms, AUDITED_EVENT_TYPES } from './alarms.ts';
export { effectiveVisibilitySeconds, indexProps, queueProps, tableProps } from './schema-resources.ts';
export { BUSINESS_WRITE_ACTIONS } from './permissions.ts';
