/**
 * `cronfence`: what a jobs module needs. `defineJob` and the registry, the
 * handler's context, the lifecycle events, the job spec, and every error
 * cronfence throws on purpose (branch on them with `instanceof`).
 */
export { defineJob, HandlerRegistry, type JobContext, type JobFunction, type JobHandler } from './engine/define-job.ts';
export type { BusinessWrite, AttributeMap } from './core/ports.ts';
export type { ChunkCommitOutcome, ChunkOptions, ChunkWork, OutboundRequest } from './core/chunks.ts';
export { OutboxDispatcher, type DeliverRequest, type OutboxDispatcherDeps } from './engine/outbox-dispatcher.ts';
export { LIFECYCLE_EVENT_TYPES, type LifecycleEvent, type LifecycleEventType } from './core/events.ts';
export { DEFAULT_POLICIES, MAX_ATTEMPTS, type JobPolicies, type JobSpec, type JobSpecInput } from './core/job-spec.ts';
export type { LocalTable } from './lambda/jobs-module.ts';
export type { Clock } from './core/clock.ts';
export {
  AlreadyCommittedError,
  BusinessConditionFailedError,
  ChunkInputChangedError,
  CommitRejectedError,
  CronfenceError,
  FencedOutError,
  InvalidChunkError,
  InvalidFieldError,
  InvalidJobSpecError,
  InvalidOperatorRequestError,
  InvalidSchedulerPropError,
  JobExistsError,
  JobNotFoundError,
  JobOwnershipError,
  JobTimeoutError,
  JobVersionConflictError,
  LeaseLostError,
  MalformedMessageError,
  MissingResourceError,
  OutcomeOnRecordError,
  StoreBusyError,
  TooManyWritesError,
  UnrunnableMessageError,
} from './core/errors.ts';
export { InvalidJobsModuleError } from './lambda/jobs-module.ts';
