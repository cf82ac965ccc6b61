/** `cronfence/cdk`: the CDK construct library (`import { CronScheduler } from 'cronfence/cdk'`). */
export { CronScheduler, WORKER_TIMEOUT_SLACK } from './cron-scheduler.ts';
export type {
  AddJobOptions,
  CronSchedulerAlarmProps,
  CronSchedulerBatchProps,
  CronSchedulerDashboardProps,
  CronSchedulerMetricsProps,
  CronSchedulerProps,
} from './props.ts';
export { ScheduledJob, JOB_RESOURCE_TYPE, jobResourceProperties, type JobResourceProperties } from './scheduled-job.ts';
export { SchedulerAlarms, AUDITED_EVENT_TYPES, NO_TOPIC_WARNING } from './alarms.ts';
export { SchedulerDashboard, type SchedulerDashboardProps } from './dashboard.ts';
export { SchedulerMetrics, DYNAMO_OPERATIONS, type MetricOptions } from './scheduler-metrics.ts';
export {
  DEFAULT_METRICS_NAMESPACE,
  ENGINE_METRICS,
  SERVICE_DIMENSION,
  type EngineMetric,
  type EngineMetricKey,
} from '../lambda/metric-names.ts';
export { effectiveVisibilitySeconds, indexProps, queueProps, tableProps } from './schema-resources.ts';
export { BUSINESS_WRITE_ACTIONS } from './permissions.ts';
