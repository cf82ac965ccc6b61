/**
 * Schedule kinds and policies against the emulator: what the real Scanner
 * sends as it takes up the wheel's buckets (rate, at) and the misfire
 * policy's SKIPPED range it records, the
 * real worker over the real queue (jitter's delay, a within-second start,
 * a one-time job deleting itself), read back from the tables; and `cronfence verify`'s expected
 * occurrences counting a misfire range as SKIPPED, not missing, also where
 * the range began before the window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { jitterOffsetMs } from '../../lib/core/jitter.ts';
import { isoSecond } from '../../lib/core/execution-key.ts';
import { NEVER, nextOccurrenceOf } from '../../lib/core/job-lifecycle.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import { createWorkerHandler } from '../../lib/lambda/handlers.ts';
import { verifyInstallation } from '../../lib/aws/verify-installation.ts';
import { SqsPoller } from '../../lib/local/sqs-poller.ts';
import { wallOf } from '../../tools/chaos/expected.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { recordingRuntime, type RecordingQueue } from '../support/recording-queue.ts';

let installation: TestInstallation;
/** The manual-clock tests' own installation: their slices lie in June 2026, and a real-time worker must never meet them. */
let manual: TestInstallation;
beforeAll(async () => {
  [installation, manual] = await Promise.all([createTestInstallation(), createTestInstallation()]);
});
afterAll(() => {
  installation?.destroy();
  manual?.destroy();
});

const silent = { info: () => {}, error: () => {} };
const T0 = Date.parse('2026-06-01T12:00:00Z');

/** A runtime on the manual-clock installation whose clock the test moves (scanner and repository), and what it sends. */
function manualRuntime(clock: ManualClock): ReturnType<typeof recordingRuntime> {
  return recordingRuntime(manual, { clock });
}

/** Runs a real-time worker with `handlers` on the installation's work queue until `done` holds (20 s at most). */
async function workUntil(handlers: HandlerRegistry, done: () => boolean | Promise<boolean>): Promise<void> {
  const { runtime } = installation;
  const poller = new SqsPoller({
    sqs: runtime.clients.sqs,
    queueUrl: installation.resources.queueUrls.work,
    handler: createWorkerHandler(runtime, 'w1', handlers, silent),
    waitTimeSeconds: 1,
  });
  const running = poller.run();
  try {
    await eventually(async () => ((await done()) ? true : undefined), 20_000, 100);
  } finally {
    poller.stop();
    await running;
  }
}

/** The instants of `jobId` the scans sent. */
function sentOf(queue: RecordingQueue, jobId: string): number[] {
  return queue.sent.filter((message) => message.jobId === jobId).map((message) => message.scheduledAt);
}

describe('schedule kinds against the emulator', () => {
  it('rate(...) occurrences are sent at the epoch-aligned instants; at(...) at its local time in the zone, once', async () => {
    const clock = new ManualClock(T0 + 3_000);
    const { runtime, queue } = manualRuntime(clock);
    await runtime.jobs().put({ id: 'k-rate', schedule: 'rate(15 seconds)', handler: 'h' });
    const { job: atJob } = await runtime
      .jobs()
      .put({ id: 'k-at', schedule: 'at(2026-06-01T17:30:20)', timeZone: 'Asia/Kolkata', handler: 'h' });
    await runtime.scanner('s').scanShard(0);
    clock.set(T0 + 25_000);
    await runtime.scanner('s').scanShard(0);
    const rate = sentOf(queue, 'k-rate');
    // The first multiple of 15 s since the epoch at or after the put, then every 15 s, none skipped or repeated.
    expect(rate.length).toBeGreaterThan(2);
    expect(rate).toEqual(rate.map((_, index) => T0 + 15_000 * (index + 1)));
    expect(sentOf(queue, 'k-at').map(isoSecond)).toEqual(['2026-06-01T12:00:20Z']);
    // Sent with the definition, not written: the claim creates each slice.
    expect(queue.sent.every((message) => message.generation !== undefined)).toBe(true);
    expect(await runtime.jobs().slicesOf('k-rate', 0)).toEqual([]);
    // Its slot taken up, the one-time job has no next occurrence.
    expect(nextOccurrenceOf(atJob, clock.now())).toBe(NEVER);
  });

  it('misfire "none" after an outage: one SKIPPED misfire range with its count, an event, nothing due run; verify counts it SKIPPED', async () => {
    const clock = new ManualClock(T0);
    const { runtime, queue } = manualRuntime(clock);
    await runtime.jobs().put({ id: 'k-none', schedule: 'rate(10 seconds)', handler: 'h', policies: { misfire: 'none' } });
    await runtime.jobs().put({ id: 'k-latest', schedule: 'rate(10 seconds)', handler: 'h', policies: { misfire: 'latest' } });
    clock.set(T0 + 180_000); // three minutes of no scans
    const report = await runtime.scanner('s').scanShard(0);
    expect(report.skipped).toBe(18 + 17);
    const none = await runtime.jobs().slicesOf('k-none', 0);
    const range = none.find((slice) => slice.status === SliceStatus.Skipped);
    expect(range).toMatchObject({ scheduledAt: T0, skipReason: 'misfire', missedCount: 18, missedUntil: T0 + 180_000 });
    expect(none.filter((slice) => slice.scheduledAt < T0 + 180_000)).toHaveLength(1);
    expect(sentOf(queue, 'k-none').filter((at) => at < T0 + 180_000)).toEqual([]);
    const latest = await runtime.jobs().slicesOf('k-latest', 0);
    expect(
      latest
        .filter((slice) => slice.scheduledAt < T0 + 180_000)
        .map((slice) => [isoSecond(slice.scheduledAt), slice.status, slice.missedCount]),
    ).toEqual([['2026-06-01T12:00:00Z', 'SKIPPED', 17]]);
    // The latest due occurrence runs: sent, for its claim to create.
    expect(
      sentOf(queue, 'k-latest')
        .filter((at) => at < T0 + 180_000)
        .map(isoSecond),
    ).toEqual(['2026-06-01T12:02:50Z']);
    const audit = await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config, clock },
      { since: T0, jobId: 'k-none' },
    );
    expect(audit.expected.occurrences).toBeGreaterThan(0);
    expect(audit.expected.final.SKIPPED).toBe(audit.expected.occurrences);
    expect(audit.expected.missing).toBe(0);
    expect(audit.violations).toEqual([]);
    // A window that begins inside the range: the range record lies before it and still stands for its occurrences
    // (a chaos drill's window began while its misfire jobs' ranges, made at the first scan, reached into it).
    const inside = await verifyInstallation(
      { dynamo: runtime.clients.dynamo, config: runtime.config, clock },
      { since: T0 + 60_000, jobId: 'k-none', graceMs: 0 },
    );
    expect(inside.expected.occurrences).toBe(12);
    expect(inside.expected.final.SKIPPED).toBe(12);
    expect(inside.violations).toEqual([]);
    const skippedEvents = manual.events.ofType('skipped').filter((event) => event.jobId.startsWith('k-'));
    expect(skippedEvents.map((event) => [event.jobId, event.reason, event.count]).sort()).toEqual([
      ['k-latest', 'misfire', 17],
      ['k-none', 'misfire', 18],
    ]);
  });

  it('a jittered slice is delayed by its offset and started then; its key stays the nominal second', async () => {
    const runs: { key: string; at: number }[] = [];
    const handlers = new HandlerRegistry([defineJob('jittered', async (ctx) => void runs.push({ key: ctx.executionKey, at: Date.now() }))]);
    const { runtime } = installation;
    // An id whose offset is at least 3 s, so the delay is visible beside the emulator's own ~0.1 s.
    const id = ['k-jitter-a', 'k-jitter-b', 'k-jitter-c', 'k-jitter-d', 'k-jitter-e'].find(
      (candidate) => jitterOffsetMs(candidate, 6000) >= 3000,
    ) as string;
    const offset = jitterOffsetMs(id, 6000);
    const nominal = Math.ceil((Date.now() + 2000) / 1000) * 1000 + 1000;
    await runtime
      .jobs(['jittered'])
      .put({ id, schedule: `at(${new Date(nominal).toISOString().slice(0, 19)})`, handler: 'jittered', jitter: '6s' });
    await runtime.scanner('s').scanShard(0);
    await workUntil(handlers, () => runs.length > 0);
    expect(runs[0]?.key).toBe(`${id}:${isoSecond(nominal)}`);
    expect(runs[0]!.at - nominal).toBeGreaterThanOrEqual(offset);
    // Not a start-lag bound (the bench measures that): only that it ran near its jittered time, not at the next delivery.
    expect(runs[0]!.at - nominal).toBeLessThan(offset + 3000);
  });

  it('a within-second slice surfaces at or after its second, is claimed and started then, with no wait, and commits once', async () => {
    const runs: { key: string; at: number }[] = [];
    const handlers = new HandlerRegistry([defineJob('within', async (ctx) => void runs.push({ key: ctx.executionKey, at: Date.now() }))]);
    const { runtime } = installation;
    const id = 'k-within-second';
    const nominal = Math.ceil((Date.now() + 2000) / 1000) * 1000 + 1000;
    await runtime.jobs(['within']).put({
      id,
      schedule: `at(${new Date(nominal).toISOString().slice(0, 19)})`,
      handler: 'within',
      policies: { startPrecision: 'within-second' },
    });
    await runtime.scanner('s').scanShard(0);
    await workUntil(handlers, () => installation.events.ofType('committed').some((event) => event.jobId === id));
    expect(runs).toEqual([{ key: `${id}:${isoSecond(nominal)}`, at: expect.any(Number) }]);
    expect(runs[0]!.at).toBeGreaterThanOrEqual(nominal);
    const of = (type: 'claimed' | 'started' | 'committed') => installation.events.ofType(type).filter((event) => event.jobId === id);
    // Claimed only once its message surfaced, at or after the second: nothing was left to wait for before the start.
    expect(of('claimed')).toHaveLength(1);
    expect(Date.parse(of('claimed')[0]!.at)).toBeGreaterThanOrEqual(nominal);
    expect(of('started')[0]!.startLagMs).toBeGreaterThanOrEqual(0);
    // Not a start-lag bound (the bench measures that): only that it ran within its second's delivery, not at a later one.
    expect(runs[0]!.at - nominal).toBeLessThan(3000);
    expect(of('committed')).toHaveLength(1);
    const [slice] = await runtime.jobs().slicesOf(id, 0);
    expect(slice).toMatchObject({ status: SliceStatus.Succeeded, attempts: 1 });
  });

  it('a one-time job with afterOneTime "delete" runs once and is gone; its slice and ledger stay', async () => {
    let runs = 0;
    const handlers = new HandlerRegistry([defineJob('once', async () => void runs++)]);
    const { runtime } = installation;
    const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const local = new Date(wallOf(at, 'America/New_York')).toISOString().slice(0, 19);
    await runtime
      .jobs(['once'])
      .put({ id: 'k-once', schedule: `at(${local})`, timeZone: 'America/New_York', handler: 'once', policies: { afterOneTime: 'delete' } });
    await runtime.scanner('s').scanShard(0);
    await workUntil(handlers, async () => (await runtime.jobs().get('k-once')) === undefined);
    expect(runs).toBe(1);
    expect((await runtime.jobs().slicesOf('k-once', 0)).map((slice) => [slice.scheduledAt, slice.status])).toEqual([[at, 'SUCCEEDED']]);
    expect(await runtime.slices.getLedger({ jobId: 'k-once', scheduledAt: at })).toMatchObject({ outcome: 'SUCCEEDED' });
  });
});
