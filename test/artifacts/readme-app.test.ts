/**
 * The README's consumer app ("Use it in your CDK app": the jobs module and
 * the stack a team writes), synthesized against the sources with its
 * bundles: the worker Lambda generated around the team's module, run from
 * cdk.out as Lambda runs it, commits the team's row into the team's own
 * table (given with `grantCommit`), and every call it makes is allowed by
 * its role. The imports of `cronfence` and `cronfence/cdk` point at the
 * sources here (test/package installs the packed tarball instead).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { App, type Stack } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import type { CronScheduler } from '../../lib/cdk/cron-scheduler.ts';
import { JOB_RESOURCE_TYPE } from '../../lib/cdk/scheduled-job.ts';
import { CronfenceClient } from '../../lib/client/cronfence-client.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { lambdaFunction, resourcesOfType, type CfnTemplate } from '../support/cfn-template.ts';
import { deniedCalls, unusedGrants } from '../support/iam-proof.ts';
import { ProviderFramework } from '../support/lambda-events.ts';
import { ROOT, writeReadmeFiles } from '../support/readme-app.ts';
import type { RecordedCall, RecordingProxy } from '../support/recording-proxy.ts';
import { logicalIdOf } from '../cdk/synth.ts';
import {
  arnLabel,
  deploy,
  DeployedFunction,
  eventSourceMapping,
  functionsOf,
  rolesOf,
  upstreamEndpoints,
  type Deployment,
} from './stack-rig.ts';

/** What `ctx.commit` may write to the team's table (grantCommit) beyond the README handler's put. */
const NOT_EXERCISED: Record<string, string> = {
  'worker dynamodb:UpdateItem Reports': 'ctx.commit update writes (grantCommit)',
  'worker dynamodb:DeleteItem Reports': 'ctx.commit delete writes (grantCommit)',
  'worker dynamodb:ConditionCheckItem Reports': 'ctx.commit condition checks (grantCommit)',
  'worker dynamodb:DescribeTable Reports': 'naming the table when a commit finds it gone (grantCommit)',
};

const dir = (() => {
  mkdirSync(path.join(ROOT, '.scratch'), { recursive: true });
  // Inside the repository, so the stack resolves aws-cdk-lib from its node_modules; with a lock file of its own, so
  // the generated worker is bundled from this app as from a team's project.
  return mkdtempSync(path.join(ROOT, '.scratch', 'readme-app-'));
})();
const calls: RecordedCall[] = [];
const clients = createAwsClients();
const prefix = `rdm${randomUUID().slice(0, 8)}`;
const functions = new Map<string, DeployedFunction>();
const proxies: RecordingProxy[] = [];
let template: CfnTemplate;
let scheduler: CronScheduler;
let deployment: Deployment;

/** The README's files as written, but for the package imports (the sources here) and `__dirname` (this is ESM). */
function againstSources(file: string, text: string): string {
  return text
    .replace(/from 'cronfence'/g, `from ${JSON.stringify(path.join(ROOT, 'lib', 'index.ts'))}`)
    .replace(/from 'cronfence\/cdk'/g, `from ${JSON.stringify(path.join(ROOT, 'lib', 'cdk', 'index.ts'))}`)
    .replace(/__dirname/g, JSON.stringify(path.dirname(path.join(dir, file))));
}

beforeAll(async () => {
  expect(writeReadmeFiles(dir, againstSources)).toEqual(['lib/my-app-stack.ts', 'src/cron-jobs.ts']);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'my-app', version: '0.1.0', private: true }));
  writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'my-app', version: '0.1.0', lockfileVersion: 3, requires: true, packages: {} }),
  );
  const { MyAppStack } = (await import(path.join(dir, 'lib', 'my-app-stack.ts'))) as {
    MyAppStack: new (scope: Construct, id: string) => Stack;
  };
  const app = new App({ outdir: path.join(dir, 'cdk.out'), builtinCloudFormationValidation: false });
  const stack = new MyAppStack(app, 'MyAppStack');
  app.synth();
  template = JSON.parse(readFileSync(path.join(dir, 'cdk.out', 'MyAppStack.template.json'), 'utf8')) as CfnTemplate;
  scheduler = stack.node.findChild('Cron') as CronScheduler;
  deployment = await deploy(clients, scheduler, prefix, [
    {
      construct: stack.node.findChild('Reports'),
      definition: { logicalName: 'reports', partitionKey: { name: 'reportId', type: 'S' }, globalSecondaryIndexes: [] },
    },
  ]);
  for (const label of ['worker', 'jobs resource', 'provider framework']) {
    const logicalId = logicalIdOf(functionsOf(scheduler)[label]!);
    functions.set(
      label,
      await DeployedFunction.start(
        label,
        lambdaFunction(template, deployment.resolver, path.join(dir, 'cdk.out'), logicalId),
        upstreamEndpoints(),
        calls,
      ),
    );
  }
}, 180_000);

afterAll(async () => {
  await Promise.all([...functions.values()].map((each) => each.stop()));
  await Promise.all(proxies.map((proxy) => proxy.close()));
  destroyAwsClients(clients);
  rmSync(dir, { recursive: true, force: true });
});

const fn = (label: string): DeployedFunction => functions.get(label)!;

describe("the README's consumer app, synthesized and run from its bundles", () => {
  it('creates its job, and the generated worker commits the row into the team’s table with the role the template gives it', async () => {
    const jobsResource = fn('jobs resource').environment();
    const framework = new ProviderFramework(
      `arn:aws:lambda:us-east-1:123456789012:function:${prefix}-provider-framework`,
      'arn:aws:cloudformation:us-east-1:123456789012:stack/MyAppStack/1',
      (event) => {
        calls.push({
          fn: 'provider framework',
          caller: 'code',
          target: 'AWSLambda.Invoke',
          body: { FunctionName: `arn:aws:lambda:us-east-1:123456789012:function:${fn('jobs resource').spec.name}` },
          status: 200,
        });
        return jobsResource.invoke(event);
      },
    );
    const jobs = resourcesOfType(template, JOB_RESOURCE_TYPE);
    expect(jobs).toHaveLength(1);
    const [logicalId, resource] = jobs[0]!;
    const properties = deployment.resolver.resolve(resource.Properties) as Record<string, unknown>;
    expect(properties.KnownHandlers).toEqual(['nightly-report']);
    const created = await framework.send({ requestType: 'Create', logicalId, resourceType: JOB_RESOURCE_TYPE, properties });
    expect(created, created.Reason).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: 'nightly-report' });

    // The nightly job runs at 02:00 Berlin: an operator's run of it now.
    const client = new CronfenceClient(clients, deployment.config, { actor: 'readme-app-test' });
    const run = await client.trigger('nightly-report', { reason: 'the README app, now' });

    const worker = fn('worker').environment();
    const mapping = await eventSourceMapping({ template, deployment, calls, proxies }, scheduler.workQueue, fn('worker'), worker);
    const deadline = Date.now() + 30_000;
    let status: string | undefined;
    while (status !== SliceStatus.Succeeded && Date.now() < deadline) {
      await mapping.pollOnce(1);
      status = (await client.listRuns('nightly-report', { since: Date.now() - 3_600_000 })).find(
        (each) => each.slice.scheduledAt === run.key.scheduledAt,
      )?.slice.status;
    }
    expect(status, worker.log()).toBe(SliceStatus.Succeeded);
    const row = await clients.dynamo.send(
      new GetItemCommand({ TableName: deployment.tables.Reports, Key: { reportId: { S: run.executionKey } }, ConsistentRead: true }),
    );
    expect(row.Item && unmarshall(row.Item)).toMatchObject({ reportId: run.executionKey });
  }, 90_000);

  it('every call was allowed by its role, and the grants grantCommit gives the team’s table were used or are listed', () => {
    const roles = rolesOf(functions, template, deployment);
    const label = arnLabel(deployment);
    expect(calls.some((call) => call.fn === 'worker' && JSON.stringify(call.body).includes(deployment.tables.Reports!))).toBe(true);
    expect(deniedCalls(calls, roles, label)).toEqual([]);
    const { unused, unknown } = unusedGrants(calls, roles, label, NOT_EXERCISED);
    expect(unused.filter((line) => line.includes(' Reports '))).toEqual([]);
    expect(unknown).toEqual([]);
  });
});
