/**
 * One job declared in a stack: a `Custom::CronfenceJob` resource whose
 * Lambda (functions/jobs-resource.ts) writes it to the jobs table with the
 * same `parseJobSpec` and `JobRepository` as the CLI. Create and Update put
 * the job; Delete (the job removed from the stack) deletes it, skipping its
 * enqueued slices, as `cronfence jobs rm` does.
 */
import { CustomResource } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { JobSpec } from '../core/job-spec.ts';

export const JOB_RESOURCE_TYPE = 'Custom::CronfenceJob';

/**
 * The custom resource's properties. CloudFormation hands every scalar to
 * the Lambda as a string, so the spec travels as one JSON string and numbers
 * keep their type. `ShardCount` is there so a change of shard count updates
 * every job (its shard is computed at put time).
 */
export interface JobResourceProperties {
  readonly Job: string;
  readonly ShardCount: string;
  readonly KnownHandlers?: string[];
}

export function jobResourceProperties(spec: JobSpec, shardCount: number, knownHandlers?: readonly string[]): JobResourceProperties {
  return {
    Job: JSON.stringify(spec),
    ShardCount: String(shardCount),
    ...(knownHandlers && { KnownHandlers: [...knownHandlers] }),
  };
}

export interface ScheduledJobProps {
  /** The provider's service token. */
  readonly serviceToken: string;
  /** Already validated by parseJobSpec (defaults filled in). */
  readonly spec: JobSpec;
  readonly shardCount: number;
  readonly knownHandlers?: readonly string[];
}

export class ScheduledJob extends Construct {
  /** The job as it is written to the jobs table. */
  readonly spec: JobSpec;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: ScheduledJobProps) {
    super(scope, id);
    this.spec = props.spec;
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: props.serviceToken,
      resourceType: JOB_RESOURCE_TYPE,
      properties: { ...jobResourceProperties(props.spec, props.shardCount, props.knownHandlers) },
    });
  }

  /** The job id (the resource's physical id). */
  get jobId(): string {
    return this.spec.id;
  }
}
