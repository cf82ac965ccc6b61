/**
 * The engine's CloudWatch metrics, by name and unit: the one list the Lambda
 * side writes (emf-metrics.ts, through Powertools metrics) and the CDK side
 * reads (lib/cdk/scheduler-metrics.ts: the dashboard and the alarms). Plain
 * data, so the CDK app never loads Powertools to learn a name.
 *
 * Every metric carries one dimension, `service` (Powertools' default
 * dimension), whose value names the installation. Not the job id: job ids are
 * unbounded (a team adds jobs from the CLI at any time), each distinct value
 * is a billed custom metric per metric name, and a dashboard built at synth
 * cannot know them. Per-job detail lives in the lifecycle events (the bus,
 * `cronfence runs`).
 */

/** The namespace when none is configured. */
export const DEFAULT_METRICS_NAMESPACE = 'Cronfence';

/** The one dimension every metric carries (Powertools' default dimension). */
export const SERVICE_DIMENSION = 'service';

/** What the construct sets on each function; Powertools' own variable names. */
export const METRICS_NAMESPACE_VARIABLE = 'POWERTOOLS_METRICS_NAMESPACE';
export const SERVICE_NAME_VARIABLE = 'POWERTOOLS_SERVICE_NAME';

export type EngineMetricUnit = 'Count' | 'Milliseconds';

export interface EngineMetric {
  readonly name: string;
  readonly unit: EngineMetricUnit;
  /** What one data point stands for (the dashboard's and docs' wording). */
  readonly description: string;
}

function metric(name: string, unit: EngineMetricUnit, description: string): EngineMetric {
  return { name, unit, description };
}

export const ENGINE_METRICS = {
  succeeded: metric('SlicesSucceeded', 'Count', 'slices committed (`committed` events)'),
  failed: metric('SlicesFailed', 'Count', 'attempts that failed with a retry to follow (`failed` events)'),
  dead: metric('SlicesDead', 'Count', 'slices given up after their last attempt (`dead` events)'),
  skipped: metric('SlicesSkipped', 'Count', 'slices skipped (`skipped` events)'),
  missed: metric('SlicesMissed', 'Count', 'occurrences older than their catch-up window, recorded MISSED (the `count` of `missed` events)'),
  startLag: metric('StartLag', 'Milliseconds', 'handler start minus the scheduled time, per started attempt (`started` events)'),
  takeovers: metric(
    'Takeovers',
    'Count',
    'claims that took a slice over from a holder whose lease lapsed (`claimed` events with `takeover`)',
  ),
  fencedOut: metric('FencedOut', 'Count', 'writes of a worker that lost its lease, refused by the fence (`fenced_out` events)'),
  commitLatency: metric('CommitLatency', 'Milliseconds', 'duration of each commit transaction a worker sends, whatever its outcome'),
  setAside: metric(
    'JobsSetAside',
    'Count',
    'jobs a scan set aside because their stored row cannot be planned or sent (`set_aside` events)',
  ),
  staleJobs: metric('StaleJobs', 'Count', "jobs the dead-man's switch found silent: no final slot within k intervals (`stale` events)"),
  throttles: metric(
    'ThrottledAwsRequests',
    'Count',
    'AWS requests (DynamoDB, SQS, EventBridge) refused as throttled, each try counted, retried ones too',
  ),
} as const satisfies Record<string, EngineMetric>;

export type EngineMetricKey = keyof typeof ENGINE_METRICS;

/** The dimension of the per-job metrics below, beside `service`. */
export const JOB_DIMENSION = 'jobId';

/**
 * Per-job metrics, dimension `jobId`: each distinct job is a billed custom
 * metric, so only these two are per job, and each only where it is needed:
 * JobStale is written for stale jobs alone (a job that names itself in the
 * alarm), JobStartLag only when CRONFENCE_PER_JOB_METRICS is `true`.
 */
export const PER_JOB_METRICS = {
  stale: metric('JobStale', 'Count', "1 per dead-man's check that found this job silent"),
  startLag: metric('JobStartLag', 'Milliseconds', 'StartLag of this job alone (CRONFENCE_PER_JOB_METRICS=true)'),
} as const satisfies Record<string, EngineMetric>;
