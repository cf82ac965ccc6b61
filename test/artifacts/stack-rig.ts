/**
 * The repo's app (app/settlement-stack.ts) synthesized with its bundles, and
 * deployed onto the emulator as far as a test can: the tables, queues and
 * bus bootstrapped the way the other tests create them, every Ref and
 * GetAtt of the template mapped to them, and each function's bundle from
 * cdk.out in its own sandbox behind a recording proxy.
 *
 * Beside the app's three jobs, the rig's stack declares three more with the
 * built-in settlement handler: one that pays 80 merchants in two chunks and
 * wires them through the outbox to a local bank, one whose payouts table
 * (granted with grantCommit) is gone at run time, so each attempt fails and
 * the slice ends DEAD, and one a runtime client created first, so the
 * stack's Create is refused.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { IConstruct } from 'constructs';
import { SettlementStack } from '../../app/settlement-stack.ts';
import { bootstrap, createTableInput } from '../../lib/aws/bootstrap.ts';
import type { AwsClients } from '../../lib/aws/clients.ts';
import { loadConfig, type CronfenceConfig } from '../../lib/aws/config.ts';
import { merchantSettlement } from '../../examples/jobs/examples.ts';
import type { TableDefinition } from '../../lib/aws/schema.ts';
import type { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  busResource,
  functionResource,
  lambdaFunction,
  queueResource,
  resourcesOfType,
  roleStatements,
  tableResource,
  TemplateResolver,
  type CfnTemplate,
  type LambdaFunctionSpec,
  type PhysicalResource,
} from '../support/cfn-template.ts';
import { awsEndpoint } from '../support/aws-endpoint.ts';
import type { Role } from '../support/iam-proof.ts';
import { SqsEventSourceMapping } from '../support/lambda-events.ts';
import { startRecordingProxy, type RecordedCall, type RecordingProxy } from '../support/recording-proxy.ts';
import { LambdaSandbox } from '../support/lambda-sandbox.ts';
import { logicalIdOf } from '../cdk/synth.ts';

export const STACK_NAME = 'Artifacts';

export interface RigJobs {
  /** Where the settlement job's wires go. */
  readonly bankUrl: string;
  /** The rig's second version of the stack (for Update and Delete): the settlement pays 40, the lost-table job is gone. */
  readonly second?: boolean;
}

/** The app's stack with the rig's jobs. */
export function buildStack(app: App, jobs: RigJobs): SettlementStack {
  const stack = new SettlementStack(app, STACK_NAME);
  const scheduler = stack.scheduler;
  scheduler.addJob('settle-and-wire', {
    schedule: '*/20 * * * * *',
    handler: merchantSettlement,
    payload: { merchants: jobs.second ? 40 : 80, merchantsPerChunk: 40, bankUrl: jobs.bankUrl },
  });
  if (!jobs.second) {
    const lost = new dynamodb.Table(stack, 'LostPayouts', { partitionKey: { name: 'payoutId', type: dynamodb.AttributeType.STRING } });
    scheduler.grantCommit(lost);
    scheduler.addJob('settle-to-lost-table', {
      schedule: '*/20 * * * * *',
      handler: merchantSettlement,
      payload: { merchants: 40, payoutsTable: lost.tableName },
      policies: { maxAttempts: 2, backoffBaseMs: 1000 },
    });
  }
  scheduler.addJob('claimed-at-runtime', { schedule: '0 3 * * *', handler: 'every-minute' });
  // Never beside itself: each claim reads the job's recent slices first.
  scheduler.addJob('exclusive-probe', { schedule: '*/5 * * * * *', handler: 'every-minute', policies: { overlap: 'skip' } });
  return stack;
}

export interface Synthesized {
  readonly stack: SettlementStack;
  readonly template: CfnTemplate;
  readonly cdkOut: string;
}

/** @param bundle false: the template alone (the stack's next version, whose bundles are the same). */
export function synthesize(jobs: RigJobs, bundle: boolean): Synthesized {
  const cdkOut = mkdtempSync(path.join(tmpdir(), 'cronfence-artifacts-'));
  const app = new App({
    outdir: cdkOut,
    builtinCloudFormationValidation: false,
    ...(!bundle && { context: { 'aws:cdk:bundling-stacks': [] } }),
  });
  const stack = buildStack(app, jobs);
  app.synth();
  const template = JSON.parse(readFileSync(path.join(cdkOut, `${STACK_NAME}.template.json`), 'utf8')) as CfnTemplate;
  return { stack, template, cdkOut };
}

/** The functions of a scheduler, by the label the test names them with. */
export function functionsOf(s: CronScheduler): Record<string, lambda.Function> {
  const provider = s.node.findChild('JobsProvider');
  return {
    tick: s.tickFunction,
    scanner: s.scannerFunction,
    worker: s.workerFunction,
    outbox: s.outboxFunction!,
    'jobs resource': s.node.findChild('JobsResource') as lambda.Function,
    'provider framework': provider.node.findChild('framework-onEvent') as lambda.Function,
  };
}

export interface Deployment {
  readonly config: CronfenceConfig;
  readonly physical: Map<string, PhysicalResource>;
  readonly resolver: TemplateResolver;
  /** Resource ARN (or index ARN) → the name the messages use. */
  readonly labels: Map<string, string>;
  /** The business tables' names on the emulator, by construct id. */
  readonly tables: Record<string, string>;
}

/** A team's own table in the stack: created on the emulator from `definition`, or left out (a table gone at run time). */
export interface BusinessTable {
  readonly construct: IConstruct;
  readonly definition?: TableDefinition;
}

/** Creates the stack's resources on the emulator and maps the template's logical ids to them. */
export async function deploy(
  clients: AwsClients,
  s: CronScheduler,
  prefix: string,
  business: readonly BusinessTable[],
): Promise<Deployment> {
  // What the stack's functions run with (the shard count above all: a client with another puts jobs on shards no scan reads).
  const config = loadConfig({
    CRONFENCE_PREFIX: prefix,
    CRONFENCE_WORK_QUEUE_VISIBILITY_MS: String(s.config.workQueueVisibilityMs),
    CRONFENCE_SHARDS: String(s.config.shardCount),
  });
  const created = await bootstrap(clients, config);
  const tables: Record<string, string> = {};
  for (const table of business) {
    const name = `${prefix}-${table.construct.node.id.toLowerCase()}`;
    tables[table.construct.node.id] = name;
    if (!table.definition) continue;
    await clients.dynamo.send(new CreateTableCommand(createTableInput(name, table.definition)));
    await waitUntilTableExists({ client: clients.dynamo, maxWaitTime: 60 }, { TableName: name });
  }
  const id = (construct: IConstruct): string => logicalIdOf(construct);
  const physical = new Map<string, PhysicalResource>([
    [id(s.jobsTable), tableResource(config.jobsTable)],
    [id(s.wheelTable), tableResource(config.wheelTable)],
    [id(s.slicesTable), tableResource(config.slicesTable)],
    [id(s.chunksTable), tableResource(config.chunksTable)],
    ...business.map((table): [string, PhysicalResource] => [id(table.construct), tableResource(tables[table.construct.node.id]!)]),
    [id(s.workQueue), queueResource(config.workQueueName, created.queueUrls.work)],
    [id(s.scanQueue), queueResource(config.scanQueueName, created.queueUrls.scan)],
    [id(s.deadLetterQueue), queueResource(config.deadLetterQueueName, created.queueUrls.deadLetter)],
    [id(s.eventBus), busResource(config.eventBusName)],
  ]);
  for (const [label, fn] of Object.entries(functionsOf(s))) physical.set(id(fn), functionResource(`${prefix}-${label.replace(/ /g, '-')}`));
  const labels = new Map<string, string>();
  const stackPath = `${s.node.scope!.node.path}/`;
  const name = (construct: IConstruct): string => construct.node.path.replace(stackPath, '');
  for (const [construct, indexes] of [
    [s.jobsTable, []],
    [s.wheelTable, []],
    [s.slicesTable, ['sweep']],
    [s.chunksTable, ['outbox']],
    ...business.map((table) => [table.construct, []] as const),
    [s.workQueue, []],
    [s.scanQueue, []],
    [s.deadLetterQueue, []],
    [s.eventBus, []],
    ...Object.values(functionsOf(s)).map((fn) => [fn, []] as const),
  ] as Array<readonly [IConstruct, string[]]>) {
    const arn = physical.get(id(construct))!.attributes.Arn!;
    labels.set(arn, name(construct));
    for (const index of indexes) labels.set(`${arn}/index/${index}`, `${name(construct)}/index/${index}`);
  }
  return { config, physical, resolver: new TemplateResolver(physical), labels, tables };
}

/** A function's environments: each a sandbox whose AWS calls go through one recording proxy (its role). */
export class DeployedFunction {
  readonly sandboxes: LambdaSandbox[] = [];

  private constructor(
    readonly label: string,
    readonly spec: LambdaFunctionSpec,
    private readonly proxy: RecordingProxy,
  ) {}

  static async start(
    label: string,
    spec: LambdaFunctionSpec,
    upstream: { dynamo: string; other: string },
    calls: RecordedCall[],
  ): Promise<DeployedFunction> {
    return new DeployedFunction(label, spec, await startRecordingProxy(label, 'code', upstream, calls));
  }

  /** A new execution environment (a cold start). */
  environment(options: { clockOffsetMs?: number } = {}): LambdaSandbox {
    const sandbox = new LambdaSandbox(this.spec, this.proxy.endpoint, options);
    this.sandboxes.push(sandbox);
    return sandbox;
  }

  async stop(): Promise<void> {
    await Promise.all(this.sandboxes.map((sandbox) => sandbox.stop()));
    await this.proxy.close();
  }
}

/** The SQS client an event source mapping polls with: the function's role, recorded as the mapping's calls. */
export async function eventSourceClient(
  label: string,
  upstream: { dynamo: string; other: string },
  calls: RecordedCall[],
): Promise<{ sqs: SQSClient; proxy: RecordingProxy }> {
  const proxy = await startRecordingProxy(label, 'event source mapping', upstream, calls);
  const sqs = new SQSClient({
    region: 'us-east-1',
    endpoint: proxy.endpoint,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    useQueueUrlAsEndpoint: false,
  });
  return { sqs, proxy };
}

/** Where the recording proxies send requests: the emulators this vitest worker uses. */
export function upstreamEndpoints(): { dynamo: string; other: string } {
  const other = awsEndpoint();
  return { dynamo: process.env.AWS_ENDPOINT_URL_DYNAMODB || other, other };
}

/**
 * The template's event source mapping from `queue` to `target`, polling with
 * the function's role into `sandbox`: its batch size, and ReportBatchItemFailures
 * as it must be set for the handlers' partial failures to keep only the failed records.
 */
export async function eventSourceMapping(
  run: {
    readonly template: CfnTemplate;
    readonly deployment: Deployment;
    readonly calls: RecordedCall[];
    readonly proxies: RecordingProxy[];
  },
  queue: sqs.IQueue,
  target: DeployedFunction,
  sandbox: LambdaSandbox,
): Promise<SqsEventSourceMapping> {
  const queueId = logicalIdOf(queue);
  const found = resourcesOfType(run.template, 'AWS::Lambda::EventSourceMapping').find(([, each]) =>
    JSON.stringify(each.Properties?.EventSourceArn).includes(queueId),
  );
  if (!found) throw new Error(`template: no event source mapping reads ${queueId}`);
  const [id, resource] = found;
  const properties = resource.Properties as { BatchSize: number; FunctionResponseTypes?: string[]; FunctionName: unknown };
  if (JSON.stringify(properties.FunctionResponseTypes) !== '["ReportBatchItemFailures"]')
    throw new Error(`template: ${id} does not report batch item failures`);
  const reads = run.deployment.resolver.string(properties.FunctionName);
  if (reads !== target.spec.name) throw new Error(`template: ${id} invokes ${reads}, not ${target.spec.name}`);
  const { sqs: client, proxy } = await eventSourceClient(target.label, upstreamEndpoints(), run.calls);
  run.proxies.push(proxy);
  const physical = run.deployment.physical.get(queueId)!;
  return new SqsEventSourceMapping(client, { url: physical.ref, arn: physical.attributes.Arn! }, properties.BatchSize, (event) =>
    sandbox.invoke(event),
  );
}

/** Each function's role as the template writes it, by the function's label. */
export function rolesOf(
  functions: ReadonlyMap<string, DeployedFunction>,
  template: CfnTemplate,
  deployment: Deployment,
): Map<string, Role> {
  return new Map(
    [...functions].map(([label, each]) => [
      label,
      { fn: label, roleId: each.spec.roleId, statements: roleStatements(template, deployment.resolver, each.spec.roleId) },
    ]),
  );
}

/** An ARN as the messages name it: the construct's path in the stack (a qualified function ARN with its `:*`). */
export function arnLabel(deployment: Deployment): (arn: string) => string {
  return (arn) => {
    const known = deployment.labels.get(arn);
    if (known) return known;
    const base = arn.endsWith(':*') ? deployment.labels.get(arn.slice(0, -2)) : undefined;
    return base ? `${base}:*` : arn;
  };
}

export function functionSpec(synthesized: Synthesized, deployment: Deployment, fn: lambda.Function): LambdaFunctionSpec {
  return lambdaFunction(synthesized.template, deployment.resolver, synthesized.cdkOut, logicalIdOf(fn));
}
