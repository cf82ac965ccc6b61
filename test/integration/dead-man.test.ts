/**
 * The dead-man's switch against the emulator: a job with no final slot
 * within k intervals (plus its timeout) raises a `stale` event naming it; a
 * job whose slots keep becoming final does not, nor does a paused one; and
 * `cronfence verify` reports the same job as a violation. The watch's store
 * path: a bounded step per tick with its cursor, probes read in batches, a
 * bad row named and the rest judged. The checks are given an instant (the
 * watch takes `now`), so no test waits for a deadline to pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeadManWatch } from '../../lib/aws/dead-man-watch.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { jobItem, toItem } from '../../lib/aws/dynamo/items.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/job-record.ts';
import { SliceStatus, type Slice } from '../../lib/core/slice.ts';
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createTickHandler, createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

const EVERY_2S = '*/2 * * * * *';

describe("dead-man's switch", () => {
  it('verify on an installation younger than the grace says it checked nothing (exit 3), not pass', async () => {
    const { runtime } = installation;
    const { job } = await runtime.jobs(['tick']).put({ id: 'young', schedule: EVERY_2S, handler: 'tick' });
    const report = await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config, clock: { ...systemClock, now: () => job.updatedAt + 60_000 } },
      { since: job.updatedAt - 3_600_000 },
    );
    expect(report.expected.occurrences).toBe(0);
    expect(report.outcome).toBe('nothing-checked');
    expect(report.exitCode).toBe(3);
    expect(report.nothingChecked).toMatch(/younger than the grace/);
    await runtime.jobs(['tick']).delete('young');
  });

  it('names the silent job in a stale event and in verify, not the running one nor the paused one', async () => {
    const { runtime } = installation;
    const jobs = runtime.jobs(['tick']);
    // "running": its slots become final; a long timeout keeps its deadline well ahead.
    await jobs.put({ id: 'running', schedule: EVERY_2S, handler: 'tick', policies: { timeoutMs: 60_000 } });
    await runtime.scanner('s1').scanShard(0);
    const handlers = new HandlerRegistry([defineJob('tick', async () => {})]);
    // What the worker logged, in the failure's message: a CI run (2026-12-03, LocalStack profile) saw no slice final in 15 s, and nothing said why.
    const logged: string[] = [];
    const log = {
      info: () => {},
      error: (message: string, fields?: Record<string, unknown>) => logged.push(`${message} ${JSON.stringify(fields ?? {})}`),
    };
    const poller = new SqsPoller({
      sqs: runtime.clients.sqs,
      queueUrl: installation.resources.queueUrls.work,
      handler: createWorkerHandler(runtime, 'w1', handlers, log),
      waitTimeSeconds: 1,
      onError: (error) => logged.push(`poll failed ${String(error)}`),
    });
    const polling = poller.run();
    try {
      await eventually(
        async () => ((await jobs.slicesOf('running', 0)).some((slice) => slice.status === SliceStatus.Succeeded) ? true : undefined),
        15_000,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; the worker logged: ${logged.slice(0, 5).join(' | ') || 'nothing'}`, { cause: error });
      });
    } finally {
      poller.stop();
      await polling;
    }
    // Created after the scan: no slice of "silent" exists, nor ever becomes final.
    const { job: silent } = await jobs.put({ id: 'silent', schedule: EVERY_2S, handler: 'tick', policies: { timeoutMs: 1000 } });
    await jobs.put({ id: 'paused', schedule: EVERY_2S, handler: 'tick', policies: { timeoutMs: 1000 } });
    await runtime.operator().pause('paused', { actor: 'ops', reason: 'maintenance' });

    // What reaches the bus: the PutEvents requests the event client sends.
    const putOnBus: { DetailType?: string; Detail?: string }[] = [];
    runtime.clients.events.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutEventsCommand')
          putOnBus.push(...((args.input as { Entries?: { DetailType?: string; Detail?: string }[] }).Entries ?? []));
        return next(args);
      },
      { step: 'initialize', name: 'recordPutEvents' },
    );
    const watch = runtime.deadMan();
    const early = await watch.check(silent.updatedAt + 3000);
    expect(early).toMatchObject({ checked: 2, stale: [] });

    const later = silent.updatedAt + 10_000;
    const report = await watch.check(later);
    expect(report.stale.map((job) => job.jobId)).toEqual(['silent']);
    expect(report.stale[0]).toMatchObject({ silentSince: silent.updatedAt, intervalMs: 2000, lastFinalAt: undefined });
    const events = installation.events.ofType('stale');
    expect(events.map((event) => [event.jobId, event.worker, event.intervalMs])).toEqual([['silent', 'dead-man', 2000]]);
    expect(events[0]?.silentSince).toBe(new Date(silent.updatedAt).toISOString());
    await runtime.bus.flush();
    const stale = putOnBus
      .filter((entry) => entry.DetailType === 'stale')
      .map((entry) => JSON.parse(entry.Detail ?? '{}') as { jobId: string });
    expect(stale.map((detail) => detail.jobId)).toEqual(['silent']);

    const verified = await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config, clock: { ...systemClock, now: () => later } },
      { since: silent.updatedAt - 60_000 },
    );
    expect(verified.deadMan).toMatchObject({ factor: 2, checked: 2 });
    expect(verified.deadMan.stale.map((job) => job.jobId)).toEqual(['silent']);
    // A stale job is a violation: verify exits 1 on it.
    expect(verified.violations.filter((violation) => violation.kind === 'stale').map((violation) => violation.jobId)).toEqual(['silent']);
    expect(verified.exitCode).toBe(1);
  });

  it('goes round the jobs table in bounded steps, reads probes in batches, names a bad row and judges the rest', async () => {
    const { runtime } = installation;
    const { dynamo } = runtime.clients;
    const { jobsTable, slicesTable } = runtime.config;
    const at = Date.parse('2026-12-01T10:00:00Z');
    // Five per-minute jobs made an hour before `now`: "fresh-*" have their last minutes final, "quiet" has nothing.
    const base = (id: string): StoredJob => ({
      id,
      schedule: '0 * * * * *',
      timeZone: 'UTC',
      dst: { gap: 'shift', repeat: 'once' },
      handler: 'tick',
      enabled: true,
      policies: DEFAULT_POLICIES,
      shard: 0,
      nextFireAt: at - 3_600_000,
      version: 1,
      generation: 1,
      createdAt: at - 3_600_000,
      updatedAt: at - 3_600_000,
    });
    const ids = ['fresh-1', 'fresh-2', 'fresh-3', 'fresh-4', 'quiet'];
    for (const id of ids) await dynamo.send(new PutItemCommand({ TableName: jobsTable, Item: jobItem(base(id)) }));
    for (const id of ids.filter((each) => each.startsWith('fresh'))) {
      const slice: Slice = {
        jobId: id,
        scheduledAt: at - 60_000,
        status: SliceStatus.Succeeded,
        fence: 1,
        owner: 'w',
        attempts: 1,
        handler: 'tick',
        policies: DEFAULT_POLICIES,
        shard: 0,
        generation: 1,
        createdAt: at - 60_000,
      };
      await dynamo.send(new PutItemCommand({ TableName: slicesTable, Item: toItem({ ...slice }) }));
    }
    // A row a manual edit broke: no policies, so it cannot be judged; and one whose schedule no longer parses.
    await dynamo.send(new PutItemCommand({ TableName: jobsTable, Item: { ...jobItem(base('garbled')), policies: { S: 'none' } } }));
    await dynamo.send(new PutItemCommand({ TableName: jobsTable, Item: jobItem({ ...base('unparsable'), schedule: 'every tuesday' }) }));

    const events: string[] = [];
    const watch = new DeadManWatch(dynamo, runtime.config, systemClock, {
      events: { emit: (event) => events.push(event.jobId) },
      jobsPerRun: 3,
    });
    const steps = [];
    do steps.push(await watch.check(at));
    while (!steps.at(-1)?.roundEnded && steps.length < 10);
    // Every item of the table, once, in steps of at most 3 (the earlier test's jobs are there too).
    expect(steps.every((step) => step.scanned <= 3)).toBe(true);
    const scanned = steps.reduce((sum, step) => sum + step.scanned, 0);
    expect(scanned).toBeGreaterThanOrEqual(ids.length + 2);
    expect(steps.length).toBe(Math.ceil(scanned / 3) + (scanned % 3 === 0 ? 1 : 0));
    const stale = steps.flatMap((step) => step.stale.map((job) => job.jobId)).filter((id) => ids.includes(id));
    expect(stale).toEqual(['quiet']);
    expect(events.filter((id) => ids.includes(id))).toEqual(['quiet']);
    const unjudged = steps.flatMap((step) => step.unjudged);
    expect(unjudged.map((job) => job.jobId).sort()).toEqual(['garbled', 'unparsable']);
    expect(unjudged.find((job) => job.jobId === 'garbled')?.reason).toBe('stored row: policies must be an object of numbers');

    // The fresh jobs were proven by their probes alone: one BatchGetItem for all, and a Query only for "quiet".
    const judged = await watch.judge(ids.map(base), at);
    expect(judged).toMatchObject({ checked: 5, sliceRequests: 2 });
    expect(judged.stale.map((job) => job.jobId)).toEqual(['quiet']);
    // The next step starts a new round.
    expect((await watch.check(at)).scanned).toBeGreaterThan(0);
  });

  it('the tick handler (what the Lambda and `cronfence dev` run each minute) emits the stale events, and a bad row does not stop it', async () => {
    const { runtime } = installation;
    const logged: string[] = [];
    const onTick = createTickHandler(
      { ...runtime, clock: { ...systemClock, now: () => Date.parse('2026-12-01T10:00:00Z') } },
      { info: () => {}, error: (message, details) => logged.push(`${message} ${JSON.stringify(details)}`) },
    );
    const before = installation.events.ofType('stale').length;
    // Two ticks go round the whole table at least once, wherever the cursor stood.
    const results = [await onTick(), await onTick()];
    expect(results.some((result) => (result.staleJobs ?? 0) > 0)).toBe(true);
    expect(
      installation.events
        .ofType('stale')
        .slice(before)
        .map((event) => event.jobId),
    ).toContain('quiet');
    expect(logged.some((line) => line.startsWith("dead-man's switch could not judge jobs") && line.includes('garbled'))).toBe(true);
  });
});
