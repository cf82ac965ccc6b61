/**
 * What a CronScheduler leaves behind when its stack is destroyed, and how a
 * name stays new on every deploy. A retained resource keeps its name after
 * `cdk destroy`: if the next `cdk deploy` of the same stack asks for that name
 * again, CloudFormation fails with "already exists". So a retained resource
 * either has a name CloudFormation generates, or one that ends in this stack
 * instance's id ({@link stackInstanceId}), which a redeploy never repeats.
 */
import { Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { InvalidSchedulerPropError } from '../core/errors.ts';

export interface LifecycleProps {
  readonly removalPolicy?: RemovalPolicy;
  readonly logRemovalPolicy?: RemovalPolicy;
  readonly deletionProtection?: boolean;
}

export interface Lifecycle {
  /** The four tables (the jobs, the wheel, the slices and their ledger, the chunks and outbox). */
  readonly tables: RemovalPolicy;
  /** The functions' log groups and the lifecycle audit log group. */
  readonly logs: RemovalPolicy;
  /** DynamoDB deletion protection on the four tables. */
  readonly deletionProtection: boolean;
}

/**
 * The props' lifecycle, defaults filled in.
 * @throws {InvalidSchedulerPropError} for deletion protection on tables the stack is told to delete:
 * `cdk destroy` would stop at the first table, DELETE_FAILED.
 */
export function lifecycleOf(props: LifecycleProps): Lifecycle {
  const tables = props.removalPolicy ?? RemovalPolicy.RETAIN;
  const deletionProtection = props.deletionProtection ?? tables !== RemovalPolicy.DESTROY;
  if (deletionProtection && tables === RemovalPolicy.DESTROY) {
    throw new InvalidSchedulerPropError(
      'deletionProtection',
      true,
      'the tables cannot be both protected and destroyed with the stack (removalPolicy DESTROY): `cdk destroy` would fail at the first table; drop one of the two',
    );
  }
  return { tables, logs: props.logRemovalPolicy ?? tables, deletionProtection };
}

/** The id of this deployment of the stack (the UUID ending its stack id): new on every create, so a retained name ending in it never repeats. */
export function stackInstanceId(scope: IConstruct): string {
  return Fn.select(2, Fn.split('/', Stack.of(scope).stackId));
}
