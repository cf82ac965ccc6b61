/**
 * Lambda: the `Custom::CronfenceJob` provider (aws-cdk-lib/custom-resources
 * Provider's onEvent). Writes a job declared with `scheduler.addJob` to the
 * jobs table through the same validation (parseJobSpec) and JobRepository as
 * `cronfence jobs add`.
 *
 * Create, Update: put the job (validated; version-fenced against a scanner's
 *                 advance). The physical id is the job id, so a renamed job
 *                 gets a new one and CloudFormation deletes the old id after.
 *                 Marked origin "cdk": a job created at run time under the same
 *                 id is refused (JobOwnershipError), never replaced.
 * Delete:         delete the job, skipping its enqueued slices; history stays;
 *                 a job created at run time (origin "runtime") is left alone.
 *                 A missing table (the stack is going away) is not an error.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { createAwsClients } from '../aws/clients.ts';
import { loadConfig } from '../aws/config.ts';
import { dynamoJobRepository } from '../aws/job-repository-wiring.ts';
import type { JobRepository } from '../engine/job-repository.ts';
import { systemClock } from '../core/clock.ts';
import { CronfenceError, MissingResourceError } from '../core/errors.ts';

export interface JobResourceResponse {
  readonly PhysicalResourceId: string;
  readonly Data?: Record<string, string | number>;
}

/**
 * Builds the repository a request uses; the handler names come from the
 * resource. (The resource's `ShardCount` only makes a shard-count change
 * update every job; the count itself comes from CRONFENCE_SHARDS, which the
 * construct sets to the same value.)
 */
export type RepositoryFactory = (knownHandlers: readonly string[] | undefined) => JobRepository;

export async function onJobEvent(event: CloudFormationCustomResourceEvent, repository: RepositoryFactory): Promise<JobResourceResponse> {
  if (event.RequestType === 'Delete') {
    try {
      // A job the application created at run time under this id is not the stack's to delete.
      await repository(undefined).delete(event.PhysicalResourceId, { origin: 'cdk' });
    } catch (error) {
      if (!(error instanceof MissingResourceError)) throw error;
    }
    return { PhysicalResourceId: event.PhysicalResourceId };
  }
  const properties = event.ResourceProperties as Record<string, unknown>;
  const job = parseJobProperty(properties.Job);
  const knownHandlers = Array.isArray(properties.KnownHandlers) ? properties.KnownHandlers.map(String) : undefined;
  // Marked as the stack's: a put never replaces a job created at run time (JobOwnershipError), nor the reverse.
  const { job: stored, created } = await repository(knownHandlers).put({ ...(job as object), origin: 'cdk' });
  return {
    PhysicalResourceId: stored.id,
    Data: { JobId: stored.id, Version: stored.version, NextFireAt: stored.nextFireAt, Created: String(created) },
  };
}

function parseJobProperty(value: unknown): unknown {
  if (typeof value !== 'string') throw new CronfenceError('Custom::CronfenceJob: property "Job" must be the job spec as a JSON string');
  try {
    return JSON.parse(value);
  } catch (cause) {
    throw new CronfenceError('Custom::CronfenceJob: property "Job" is not valid JSON', { cause });
  }
}

/** The production factory: tables and shard count from the environment the construct sets. */
export function environmentRepository(env: Record<string, string | undefined> = process.env): RepositoryFactory {
  const config = loadConfig(env);
  const dynamo = createAwsClients().dynamo;
  return (knownHandlers) => dynamoJobRepository(dynamo, config, systemClock, { random: Math.random, knownHandlers });
}

let production: RepositoryFactory | undefined;

export const handler = (event: CloudFormationCustomResourceEvent): Promise<JobResourceResponse> =>
  onJobEvent(event, (production ??= environmentRepository()));
