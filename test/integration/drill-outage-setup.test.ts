/**
 * The drill's misfire jobs come back from a simulated scanner outage
 * (tools/chaos/policy-setup.ts). The outage is written by the job's put
 * itself, so a scan that reads the inbox right after the put (a put of another
 * job asked for it) still plans each misfire job from the outage's first
 * occurrence. When the outage was a second write after the put, such a scan
 * planned the job from the entry it had read and then took up the entry the
 * outage had put back (same generation): the outage's occurrences were never
 * sent (a CI drill, drill seed 2911).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cronParserOccurrences } from '../../tools/chaos/expected.ts';
import { JobHistoryBook } from '../../tools/chaos/job-history.ts';
import { OUTAGE_MS } from '../../tools/chaos/policy-jobs.ts';
import { setUpPolicyJobs } from '../../tools/chaos/policy-setup.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { RecordingQueue } from '../support/recording-queue.ts';
import { delegate, scannerOverRuntime } from '../support/scanner-rig.ts';

let installation: TestInstallation;
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

describe("the drill's misfire outage", () => {
  it('is in place when a scan reads the inbox right after the put and finishes after the set-up', { timeout: 60_000 }, async () => {
    const { runtime } = installation;
    const queue = new RecordingQueue();
    // The first job change of the set-up (the put of the first misfire job, one transaction with its inbox entry) is
    // followed at once by a scan's read of the inbox; that scan goes on only once the set-up has ended.
    let inboxRead: () => void = () => {};
    const inboxWasRead = new Promise<void>((resolve) => (inboxRead = resolve));
    let setUpEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => (setUpEnded = resolve));
    const heldWheel = {
      ...delegate(runtime.wheel),
      inbox: async (shard: number) => {
        const entries = await runtime.wheel.inbox(shard);
        inboxRead();
        await ended;
        return entries;
      },
    };
    const scanner = scannerOverRuntime(runtime, 'scanner-eager', { wheel: heldWheel, queue });
    const scans: Promise<unknown>[] = [];
    runtime.clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (scans.length === 0 && context.commandName === 'TransactWriteItemsCommand') {
          scans.push(scanner.scanShard(0));
          await inboxWasRead;
        }
        return result;
      },
      { step: 'initialize', name: 'scanAfterFirstJobChange' },
    );

    const setUpAt = runtime.clock.now();
    const { outages } = await setUpPolicyJobs(runtime, new JobHistoryBook(), setUpAt);
    setUpEnded();
    await Promise.all(scans);
    await scanner.scanShard(0);
    expect(outages.map((outage) => outage.misfire)).toEqual(['all', 'latest', 'none']);
    for (const outage of outages) {
      expect(outage.outageFrom).toBeGreaterThanOrEqual(setUpAt - OUTAGE_MS);
      expect(outage.outageFrom).toBeLessThan(setUpAt - OUTAGE_MS + 30_000);
    }
    const runAll = outages[0];
    if (!runAll) throw new Error('no misfire-all job');
    const outageOccurrences = cronParserOccurrences(runAll.definition, runAll.outageFrom, setUpAt);
    expect(outageOccurrences.length).toBeGreaterThanOrEqual(4);
    const sent = queue.sent.filter((message) => message.jobId === runAll.jobId).map((message) => message.scheduledAt);
    expect(sent).toEqual(expect.arrayContaining(outageOccurrences));
  });
});
