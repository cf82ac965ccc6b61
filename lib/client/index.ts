/**
 * `cronfence/client`: create, change and delete schedules at run time, and
 * trigger, backfill, pause and resume them, from the application's own code.
 * Loads no CDK and no local tooling.
 */
export { CronfenceClient, createClient, type CronfenceClientOptions, type Instant, type Run } from './cronfence-client.ts';
export type { BackfillProgress, BackfillResult, TriggerResult } from '../aws/operator-actions.ts';
export type { JobSpecInput, JobOrigin } from '../core/job-spec.ts';
export type { StoredJob } from '../core/job-record.ts';
export type { OperatorNote, OperatorSlot, PauseState } from '../core/operator.ts';
export {
  CronfenceError,
  InvalidJobSpecError,
  InvalidOperatorRequestError,
  JobExistsError,
  JobNotFoundError,
  JobOwnershipError,
} from '../core/errors.ts';
