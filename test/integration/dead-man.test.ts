/**
 * The dead-man's switch against the emulator: a job with no final slot
 * within k intervals (plus its timeout) raises a `stale` event naming it; a
 * job whose slots keep becoming final does not, nor does a paused one; and
 * `cronfence verify` reports the same job. The checks are given an instant
 * (the watch takes `now`), so no test waits for a deadline to pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SliceStatus } from '../../lib/core/slice.ts';
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

const EVERY_2S = '*/2 * * * * *';

describe("dead-man's switch", () => {
  it('names the silent job in a stale event and in verify, not the running one nor the paused one', async () => {
    const { runtime } = installation;
    const jobs = runtime.jobs(['tick']);
    // "running": its slots become final; a long timeout keeps its deadline well ahead.
    await jobs.put({ id: 'running', schedule: EVERY_2S, handler: 'tick', policies: { timeoutMs: 60_000 } });
    await runtime.scanner('s1').scanShard(0);
    const handlers = new HandlerRegistry([defineJob('tick', async () => {})]);
    // What the worker logged, in the failure's message: a CI run (2026-12-03, LocalStack profile) saw no slice final in 15 s, and nothing said why.
    const logged: string[] = [];
    const log = { info: () => {}, error: (message: string, fields?: Record<string, unknown>) => logged.push(`${message} ${JSON.stringify(fields ?? {})}`) };
    const poller = new SqsPoller({ sqs: runtime.clients.sqs, queueUrl: installation.resources.queueUrls.work, handler: createWorkerHandler(runtime, 'w1', handlers, log), waitTimeSeconds: 1, onError: (error) => logged.push(`poll failed ${String(error)}`) });
    const polling = poller.run();
    try {
      await eventually(async () => ((await jobs.slicesOf('running', 0)).some((slice) => slice.status === SliceStatus.Succeeded) ? true : undefined), 15_000).catch((error: unknown) => {
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
        if (context.commandName === 'PutEventsCommand') putOnBus.push(...((args.input as { Entries?: { DetailType?: string; Detail?: string }[] }).Entries ?? []));
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
    const stale = putOnBus.filter((entry) => entry.DetailType === 'stale').map((entry) => JSON.parse(entry.Detail ?? '{}') as { jobId: string });
    expect(stale.map((detail) => detail.jobId)).toEqual(['silent']);

    const verified = await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config, clock: { now: () => later } },
      { since: silent.updatedAt - 60_000 },
    );
    expect(verified.deadMan).toMatchObject({ factor: 2, checked: 2 });
    expect(verified.deadMan.stale.map((job) => job.jobId)).toEqual(['silent']);
  });
});
