/**
 * What we ship, run as AWS runs it: the repo's app synthesized with its
 * esbuild bundles, each bundle from cdk.out invoked the way Lambda invokes
 * it (the tick by its scheduled event, the scanner and the worker by their
 * SQS event source mappings with the template's batch sizes and
 * ReportBatchItemFailures, the outbox dispatcher by its rule, the jobs
 * custom resource through the provider framework's Create, Update and
 * Delete), with the environment the template gives it, against the emulator.
 *
 * Every AWS call the bundles make is recorded (a proxy per function in front
 * of the emulator) and checked against the role policy the template gives
 * that function; every granted action must be used here or listed below with
 * its reason.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PurgeQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients } from '../../lib/aws/clients.ts';
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import type { JobRepository } from '../../lib/engine/job-repository.ts';
import { CronfenceClient } from '../../lib/client/cronfence-client.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { JOB_RESOURCE_TYPE } from '../../lib/cdk/scheduled-job.ts';
import { PAYOUTS_TABLE } from '../../examples/jobs/examples.ts';
import { resourcesOfType, type CfnTemplate } from '../support/cfn-template.ts';
import { deniedCalls, unusedGrants, type Role } from '../support/iam-proof.ts';
import {
  ProviderFramework,
  CREATE_FAILED_PHYSICAL_ID_MARKER,
  scheduledEvent,
  SqsEventSourceMapping,
  type CustomResourceResponse,
} from '../support/lambda-events.ts';
import type { RecordedCall, RecordingProxy } from '../support/recording-proxy.ts';
import type { LambdaSandbox } from '../support/lambda-sandbox.ts';
import { logicalIdOf } from '../cdk/synth.ts';
import {
  arnLabel,
  deploy,
  DeployedFunction,
  eventSourceMapping,
  functionsOf,
  functionSpec,
  rolesOf,
  STACK_NAME,
  synthesize,
  upstreamEndpoints,
  type Deployment,
  type Synthesized,
} from './stack-rig.ts';

/**
 * Grants this run may not use, each with the path that needs it. A key that
 * names no grant fails the test (the list stays true).
 */
const NOT_EXERCISED: Record<string, string> = {
  // The event source mapping (the Lambda service, with the function's role); the rig receives and deletes only.
  'scanner sqs:GetQueueAttributes Cron/ScanQueue': 'SqsEventSource: the Lambda service reads the queue attributes',
  'scanner sqs:GetQueueUrl Cron/ScanQueue': 'SqsEventSource: granted with the consume actions',
  'worker sqs:GetQueueAttributes Cron/WorkQueue': 'SqsEventSource: the Lambda service reads the queue attributes',
  'worker sqs:GetQueueUrl Cron/WorkQueue': 'SqsEventSource: granted with the consume actions',
  'provider framework lambda:GetFunction Cron/JobsResource':
    'the framework waits for the onEvent function to be active; the rig plays the framework',
  'provider framework lambda:InvokeFunction Cron/JobsResource:*': 'the framework’s grant of a qualified (version) ARN',
  // What ctx.commit may write to a table given to grantCommit (BUSINESS_WRITE_ACTIONS); the settlement only puts.
  'worker dynamodb:UpdateItem Payouts': 'ctx.commit update writes (grantCommit)',
  'worker dynamodb:DeleteItem Payouts': 'ctx.commit delete writes (grantCommit)',
  'worker dynamodb:ConditionCheckItem Payouts': 'ctx.commit condition checks (grantCommit)',
  'worker dynamodb:UpdateItem LostPayouts': 'ctx.commit update writes (grantCommit)',
  'worker dynamodb:DeleteItem LostPayouts': 'ctx.commit delete writes (grantCommit)',
  'worker dynamodb:ConditionCheckItem LostPayouts': 'ctx.commit condition checks (grantCommit)',
  'worker dynamodb:DescribeTable Payouts': 'naming the missing table when a commit finds one gone (grantCommit)',
  // Paths of a longer or less lucky run than this one.
  'scanner dynamodb:GetItem Cron/Wheel': "a shard's cursor, read when a scan resumes a shard it had to re-queue",
  'scanner dynamodb:UpdateItem Cron/Slices': 'the reconciler and the sweep: an occurrence with no slice, a range record, a slice re-sent',
  'scanner dynamodb:Query Cron/Slices/index/sweep': 'the sweep: slices waiting past the sweep grace',
  'scanner events:PutEvents Cron/Events': '`missed` events: occurrences older than their catch-up window',
  'scanner sqs:SendMessage Cron/ScanQueue': 'a scan that ran out of its budget re-queues its shard',
  'scanner sqs:ChangeMessageVisibility Cron/ScanQueue': 'the heartbeat of a scan longer than 2 s',
  'worker dynamodb:GetItem Cron/Slices': 'a claim whose reply was lost reads the slice',
  'worker dynamodb:GetItem Cron/Chunks': "a takeover's check of a chunk an earlier holder committed",
  'outbox sqs:SendMessage Cron/DeadLetterQueue': 'a request that keeps failing, after its retries (minutes of backoff)',
};

const calls: RecordedCall[] = [];
const clients = createAwsClients();
const prefix = `art${randomUUID().slice(0, 8)}`;
const wires: Array<{ key: string; body: string }> = [];
const bank = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    wires.push({ key: String(request.headers['idempotency-key']), body });
    response.writeHead(200).end('{}');
  });
});
let bankUrl: string;
let first: Synthesized;
let deployment: Deployment;
const functions = new Map<string, DeployedFunction>();
const mappingProxies: RecordingProxy[] = [];
let framework: ProviderFramework;
/** CloudFormation's view of the job resources: logical id → physical id and properties. */
const deployed = new Map<string, { physicalId: string; properties: Record<string, unknown> }>();
const started = Date.now();
let scanner: SqsEventSourceMapping;
let firstScanAt: number;

const fn = (label: string): DeployedFunction => {
  const deployedFunction = functions.get(label);
  if (!deployedFunction) throw new Error(`no function ${label}`);
  return deployedFunction;
};

function jobResources(template: CfnTemplate): Map<string, Record<string, unknown>> {
  return new Map(
    resourcesOfType(template, JOB_RESOURCE_TYPE).map(([id, resource]) => [
      id,
      deployment.resolver.resolve(resource.Properties) as Record<string, unknown>,
    ]),
  );
}

beforeAll(async () => {
  await new Promise<void>((resolve) => bank.listen(0, '127.0.0.1', resolve));
  bankUrl = `http://127.0.0.1:${(bank.address() as AddressInfo).port}`;
  first = synthesize({ bankUrl }, true);
  deployment = await deploy(clients, first.stack.scheduler, prefix, [
    { construct: first.stack.node.findChild('Payouts'), definition: PAYOUTS_TABLE },
    // Granted with grantCommit, never created: a table gone at run time.
    { construct: first.stack.node.findChild('LostPayouts') },
  ]);
  for (const [label, construct] of Object.entries(functionsOf(first.stack.scheduler))) {
    functions.set(label, await DeployedFunction.start(label, functionSpec(first, deployment, construct), upstreamEndpoints(), calls));
  }
  const jobsResource = fn('jobs resource').environment();
  const onEventArn = `arn:aws:lambda:us-east-1:123456789012:function:${fn('jobs resource').spec.name}`;
  framework = new ProviderFramework(
    `arn:aws:lambda:us-east-1:123456789012:function:${prefix}-provider-framework`,
    `arn:aws:cloudformation:us-east-1:123456789012:stack/${STACK_NAME}/${randomUUID()}`,
    (event) => {
      // The framework's own call, made with its role.
      calls.push({ fn: 'provider framework', caller: 'code', target: 'AWSLambda.Invoke', body: { FunctionName: onEventArn }, status: 200 });
      return jobsResource.invoke(event);
    },
  );
}, 180_000);

afterAll(async () => {
  await Promise.all([...functions.values()].map((each) => each.stop()));
  await Promise.all(mappingProxies.map((proxy) => proxy.close()));
  await new Promise<void>((resolve) => bank.close(() => resolve()));
  destroyAwsClients(clients);
  if (first) rmSync(first.cdkOut, { recursive: true, force: true });
  process.stdout.write(`lambda-bundles: ${calls.length} AWS calls recorded, ${Math.round((Date.now() - started) / 1000)} s\n`);
});

const client = (): CronfenceClient => new CronfenceClient(clients, deployment.config, { actor: 'artifacts-test' });
const repository = (): JobRepository => dynamoJobRepository(clients.dynamo, deployment.config, systemClock, { random: Math.random });

async function slicesOf(jobId: string): Promise<Slice[]> {
  return repository().slicesOf(jobId, Date.now() - 3_600_000);
}

async function send(request: Parameters<ProviderFramework['send']>[0]): Promise<CustomResourceResponse> {
  const response = await framework.send(request);
  if (response.Status === 'SUCCESS' && request.requestType !== 'Delete')
    deployed.set(request.logicalId, { physicalId: response.PhysicalResourceId, properties: request.properties });
  if (response.Status === 'SUCCESS' && request.requestType === 'Delete') deployed.delete(request.logicalId);
  return response;
}

const mapping = (label: string, queue: 'scanQueue' | 'workQueue', sandbox: LambdaSandbox): Promise<SqsEventSourceMapping> =>
  eventSourceMapping(
    { template: first.template, deployment, calls, proxies: mappingProxies },
    first.stack.scheduler[queue],
    fn(label),
    sandbox,
  );

describe('the synthesized bundles, invoked as Lambda invokes them', () => {
  it('creates the stack’s jobs through the provider framework; a job a runtime client owns fails its Create, and the rollback leaves it alone', async () => {
    await repository().put({ id: 'claimed-at-runtime', schedule: '0 4 * * *', handler: 'every-minute', origin: 'runtime' });
    const resources = jobResources(first.template);
    expect([...resources.values()].map((properties) => JSON.parse(String(properties.Job)).id).sort()).toEqual([
      'claimed-at-runtime',
      'exclusive-probe',
      'five-second-probe',
      'merchant-settlement',
      'minutely-probe',
      'settle-and-wire',
      'settle-to-lost-table',
    ]);
    for (const [logicalId, properties] of resources) {
      const jobId = JSON.parse(String(properties.Job)).id as string;
      const response = await send({ requestType: 'Create', logicalId, resourceType: JOB_RESOURCE_TYPE, properties });
      if (jobId === 'claimed-at-runtime') {
        expect(response).toMatchObject({ Status: 'FAILED', PhysicalResourceId: CREATE_FAILED_PHYSICAL_ID_MARKER });
        expect(response.Reason).toMatch(/claimed-at-runtime/);
        // CloudFormation's rollback deletes the failed resource: the framework answers without calling onEvent.
        const rollback = await framework.send({
          requestType: 'Delete',
          logicalId,
          resourceType: JOB_RESOURCE_TYPE,
          properties,
          physicalId: response.PhysicalResourceId,
        });
        expect(rollback).toMatchObject({ Status: 'SUCCESS', invoked: false });
        expect((await repository().get(jobId))?.schedule).toBe('0 4 * * *');
        continue;
      }
      expect(response, response.Reason).toMatchObject({
        Status: 'SUCCESS',
        PhysicalResourceId: jobId,
        Data: { JobId: jobId, Created: 'true' },
      });
      expect((await repository().get(jobId))?.origin).toBe('cdk');
    }
  }, 60_000);

  it('tick → scan → work: SUCCEEDED, the settlement’s payouts, a DEAD slice dead-lettered, poison messages dead-lettered', async () => {
    // A job the application creates at run time (cronfence/client): once, in 10 s, then deleted by the worker that ran it.
    const onceAt = new Date(Math.ceil((Date.now() + 10_000) / 1000) * 1000).toISOString().slice(0, 19);
    await client().createJob({
      id: 'one-time',
      schedule: `at(${onceAt})`,
      timeZone: 'UTC',
      handler: 'every-minute',
      policies: { afterOneTime: 'delete' },
    });
    const tick = await fn('tick')
      .environment()
      .invoke<{ shards: number }>(scheduledEvent(`arn:aws:events:us-east-1:123456789012:rule/${prefix}-tick`));
    expect(tick.shards).toBe(4);
    const scanUrl = deployment.physical.get(logicalIdOf(first.stack.scheduler.scanQueue))!.ref;
    const workUrl = deployment.physical.get(logicalIdOf(first.stack.scheduler.workQueue))!.ref;
    // From outside: a body no cronfence code wrote, on each queue.
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: scanUrl, MessageBody: '{"shard":"all"}' }));
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: workUrl, MessageBody: 'not a slice' }));

    scanner = await mapping('scanner', 'scanQueue', fn('scanner').environment());
    firstScanAt = Date.now();
    for (let idle = 0; idle < 2;) idle = (await scanner.pollOnce(1)) === 0 ? idle + 1 : 0;
    // The tick's four, the one the client's createJob asked for (its shard, at once), the forged one.
    expect(scanner.outcomes.reduce((sum, outcome) => sum + outcome.received, 0)).toBe(6);
    expect(
      scanner.outcomes.every((outcome) => outcome.received === 1 && !outcome.error),
      JSON.stringify(scanner.outcomes),
    ).toBe(true);

    const workers = await Promise.all([0, 1].map(() => mapping('worker', 'workQueue', fn('worker').environment())));
    const done = async (): Promise<boolean> => {
      const [probe, exclusive, settled, lost] = await Promise.all(
        ['five-second-probe', 'exclusive-probe', 'settle-and-wire', 'settle-to-lost-table'].map(slicesOf),
      );
      return (
        probe!.some((slice) => slice.status === SliceStatus.Succeeded) &&
        exclusive!.some((slice) => slice.status === SliceStatus.Succeeded) &&
        settled!.some((slice) => slice.status === SliceStatus.Succeeded) &&
        lost!.some((slice) => slice.status === SliceStatus.Dead) &&
        // The one-time job ran and its worker deleted it.
        (await repository().get('one-time')) === undefined
      );
    };
    const deadline = Date.now() + 75_000;
    let finished = false;
    await Promise.all(
      workers.map(async (worker) => {
        while (!finished && Date.now() < deadline) {
          await worker.pollOnce(1);
          finished ||= await done();
        }
      }),
    );
    const outcomes = workers.flatMap((worker) => worker.outcomes);
    const states = async (): Promise<string> =>
      JSON.stringify(
        await Promise.all(
          ['five-second-probe', 'exclusive-probe', 'settle-and-wire', 'settle-to-lost-table', 'one-time'].map(async (job) => [
            job,
            (await slicesOf(job)).map((slice) => slice.status),
            await repository()
              .get(job)
              .then((stored) => stored?.generation),
          ]),
        ),
      );
    expect(finished, `${await states()}\n${JSON.stringify(outcomes)}\n${fn('worker').sandboxes[0]!.log()}`).toBe(true);
    expect(
      outcomes.filter((outcome) => outcome.error),
      fn('worker').sandboxes[0]!.log(),
    ).toEqual([]);
    // The lost table's first attempt failed and its message stayed (a batch item failure), the rest of its batch went.
    expect(outcomes.some((outcome) => outcome.kept > 0)).toBe(true);
    expect(Math.max(...outcomes.map((outcome) => outcome.received))).toBeLessThanOrEqual(10);

    const settled = (await slicesOf('settle-and-wire')).find((slice) => slice.status === SliceStatus.Succeeded)!;
    const key = `settle-and-wire:${new Date(settled.scheduledAt).toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
    const summary = await clients.dynamo.send(
      new GetItemCommand({ TableName: deployment.tables.Payouts, Key: { payoutId: { S: key } }, ConsistentRead: true }),
    );
    expect(summary.Item && unmarshall(summary.Item), key).toMatchObject({ merchants: 80, chunks: 2 });
    expect((await slicesOf('one-time')).map((slice) => slice.status)).toEqual([SliceStatus.Succeeded]);
    const lost = (await slicesOf('settle-to-lost-table')).find((slice) => slice.status === SliceStatus.Dead)!;
    expect(lost.attempts).toBe(2);

    const deadLetters = await drainDeadLetters();
    expect(deadLetters.some((body) => body.includes('settle-to-lost-table'))).toBe(true);
    expect(deadLetters.some((body) => body.includes('not a slice'))).toBe(true);
    expect(deadLetters.some((body) => body.includes('{\\"shard\\":\\"all\\"}') || body.includes('"shard":"all"'))).toBe(true);
  }, 150_000);

  it('the outbox dispatcher delivers the settlement’s wires, each with its idempotency key', async () => {
    const pass = await fn('outbox')
      .environment()
      .invoke<{ delivered: number; dead: number }>(scheduledEvent(`arn:aws:events:us-east-1:123456789012:rule/${prefix}-outbox`));
    expect(pass.delivered).toBeGreaterThanOrEqual(80);
    expect(pass.dead).toBe(0);
    expect(new Set(wires.map((wire) => wire.key)).size).toBe(wires.length);
    expect(wires.every((wire) => wire.key.startsWith('settle-and-wire:'))).toBe(true);
  }, 90_000);

  it("the tick's step of the dead-man's switch finds the jobs that went silent; the scans it queues reconcile the buckets a grace overdue", async () => {
    // This environment's clock alone is moved 6 minutes on: the jobs have been silent since, more than twice the
    // minutely job's interval (the switch runs a bounded step at every tick; one step covers these few jobs).
    const offset = 6 * 60_000;
    const tick = await fn('tick')
      .environment({ clockOffsetMs: offset })
      .invoke<{ shards: number; staleJobs?: number }>(scheduledEvent(`arn:aws:events:us-east-1:123456789012:rule/${prefix}-tick`));
    expect(tick.shards).toBe(4);
    expect(tick.staleJobs).toBeGreaterThanOrEqual(1);
    const stale = calls.filter(
      (call) => call.fn === 'tick' && call.target === 'AWSEvents.PutEvents' && JSON.stringify(call.body).includes('stale'),
    );
    expect(stale.length, fn('tick').sandboxes.at(-1)!.log(20)).toBeGreaterThanOrEqual(1);

    // Once the first scan's buckets are a sweep grace (30 s) old, a scan reads their slices again (the reconciler).
    // Occurrences sent late (taken up from the inbox after they were due) get the grace from their send, which on a
    // loaded machine can come seconds after the first scan: the tick queues the shards' scans again until one reconciles.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstScanAt + deployment.config.sweepGraceMs + 6000 - Date.now())));
    const before = scanner.outcomes.length;
    for (let idle = 0; idle < 2;) idle = (await scanner.pollOnce(1)) === 0 ? idle + 1 : 0;
    expect(scanner.outcomes.slice(before).reduce((sum, outcome) => sum + outcome.received, 0)).toBe(4);
    const reconciled = (): unknown[] =>
      calls.filter(
        (call) =>
          call.fn === 'scanner' &&
          call.target.endsWith('.Query') &&
          call.body.TableName === deployment.config.slicesTable &&
          !call.body.IndexName,
      );
    for (let round = 0; round < 6 && reconciled().length === 0; round++) {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await fn('tick')
        .environment()
        .invoke(scheduledEvent(`arn:aws:events:us-east-1:123456789012:rule/${prefix}-tick`));
      for (let idle = 0; idle < 2;) idle = (await scanner.pollOnce(1)) === 0 ? idle + 1 : 0;
    }
    expect(reconciled().length).toBeGreaterThanOrEqual(1);
  }, 150_000);

  it('updates a job and deletes one removed from the stack (the next deploy), then deletes the stack', async () => {
    // An operator's run of the job, waiting on the queue when the next deploy changes the job.
    const triggered = await client().trigger('settle-and-wire', { reason: 'before the update' });
    const second = synthesize({ bankUrl, second: true }, false);
    try {
      const next = jobResources(second.template);
      for (const [logicalId, properties] of next) {
        const current = deployed.get(logicalId);
        if (!current) continue; // the runtime-owned job: its Create failed before
        if (JSON.stringify(current.properties) === JSON.stringify(properties)) continue;
        const response = await send({
          requestType: 'Update',
          logicalId,
          resourceType: JOB_RESOURCE_TYPE,
          properties,
          oldProperties: current.properties,
          physicalId: current.physicalId,
        });
        expect(response, response.Reason).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: current.physicalId });
      }
      expect(
        framework.requests
          .filter((request) => request.requestType === 'Update')
          .map((request) => JSON.parse(String(request.properties.Job)).id),
      ).toEqual(['settle-and-wire']);
      const updated = await repository().require('settle-and-wire');
      expect(updated.payload).toMatchObject({ merchants: 40 });
      expect(updated.generation).toBe(2);
      // The first generation's slice waiting on the queue will not run.
      expect((await slicesOf('settle-and-wire')).find((slice) => slice.scheduledAt === triggered.key.scheduledAt)).toMatchObject({
        status: SliceStatus.Skipped,
        skipReason: 'superseded',
      });

      // CloudFormation's cleanup: resources no longer in the template are deleted.
      for (const [logicalId, current] of [...deployed]) {
        if (next.has(logicalId)) continue;
        const response = await send({
          requestType: 'Delete',
          logicalId,
          resourceType: JOB_RESOURCE_TYPE,
          properties: current.properties,
          physicalId: current.physicalId,
        });
        expect(response, response.Reason).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: current.physicalId });
      }
      expect(await repository().get('settle-to-lost-table')).toBeUndefined();
      expect(await repository().get('settle-and-wire')).toBeDefined();

      // `cdk destroy`: every resource deleted.
      for (const [logicalId, current] of [...deployed]) {
        const response = await send({
          requestType: 'Delete',
          logicalId,
          resourceType: JOB_RESOURCE_TYPE,
          properties: current.properties,
          physicalId: current.physicalId,
        });
        expect(response, response.Reason).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: current.physicalId });
      }
      expect((await repository().list()).map((job) => job.id)).toEqual(['claimed-at-runtime']);
    } finally {
      rmSync(second.cdkOut, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('IAM proven from the recorded calls', () => {
  const roles = (): Map<string, Role> => rolesOf(functions, first.template, deployment);
  const label = (arn: string): string => arnLabel(deployment)(arn);

  it('every call a bundle made is allowed by the role the template gives its function', () => {
    expect(calls.length).toBeGreaterThan(100);
    expect(new Set(calls.map((call) => call.fn))).toEqual(new Set(functions.keys()));
    expect(deniedCalls(calls, roles(), label)).toEqual([]);
  });

  it('every granted action was used in the run, or is listed with its reason', () => {
    const { unused, unknown } = unusedGrants(calls, roles(), label, NOT_EXERCISED);
    expect(unused, 'granted and never used: remove the grant, or list it in NOT_EXERCISED with its reason').toEqual([]);
    expect(unknown, 'listed in NOT_EXERCISED but granted nowhere: take it off the list').toEqual([]);
  });
});

async function drainDeadLetters(): Promise<string[]> {
  const url = deployment.physical.get(logicalIdOf(first.stack.scheduler.deadLetterQueue))!.ref;
  const bodies: string[] = [];
  for (;;) {
    const received = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!received.Messages?.length) break;
    bodies.push(...received.Messages.map((message) => message.Body ?? ''));
  }
  await clients.sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
  return bodies;
}
