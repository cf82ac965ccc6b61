/**
 * Synthesizes stacks for the CDK tests without bundling (the bundling-stacks
 * context is empty, so no esbuild run) and without the built-in
 * CloudFormation validation plugin (seconds of WASM start-up per app); the
 * tests assert the template themselves.
 */
import { fileURLToPath } from 'node:url';
import { App, CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import type { CronSchedulerProps } from '../../lib/cdk/props.ts';
import { registry } from '../../examples/jobs/index.ts';

/** The example jobs' worker (examples/jobs), for the tests whose scheduler's jobs do not matter: the construct has no default. */
export const EXAMPLE_WORKER = {
  workerEntry: fileURLToPath(new URL('../../examples/jobs/worker.ts', import.meta.url)),
  handlers: registry,
} as const satisfies CronSchedulerProps;

/** `props`, with the example jobs' worker unless they name jobs or a worker entry of their own. */
export function withExampleWorker(props: CronSchedulerProps = {}): CronSchedulerProps {
  return props.jobs !== undefined || props.workerEntry !== undefined ? props : { ...EXAMPLE_WORKER, ...props };
}

export function testApp(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

export interface SynthesizedScheduler {
  readonly stack: Stack;
  readonly scheduler: CronScheduler;
  readonly template: Template;
}

export function synthScheduler(
  props: CronSchedulerProps = {},
  configure?: (scheduler: CronScheduler, stack: Stack) => void,
): SynthesizedScheduler {
  const stack = new Stack(testApp(), 'Test');
  const scheduler = new CronScheduler(stack, 'Cron', withExampleWorker(props));
  configure?.(scheduler, stack);
  return { stack, scheduler, template: Template.fromStack(stack) };
}

export type Resources = Record<
  string,
  { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string; UpdateReplacePolicy?: string }
>;

export function resourcesOf(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalIdOf(construct: IConstruct): string {
  const child = construct.node.defaultChild;
  if (!(child instanceof CfnElement)) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return Stack.of(construct).resolve(child.logicalId) as string;
}
