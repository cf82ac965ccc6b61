/**
 * Scanners under the lean model, against the emulator: a scan sends each
 * occurrence as a message carrying its definition and writes no slice (the
 * claim creates it). Two scanners racing one shard, or a scanner that dies
 * mid-scan, send duplicates but never leave a gap; one claim wins each
 * occurrence and the copies are dropped, so each runs once. The sweep
 * re-sends only the slices waiting in its index, and the reconciler recovers
 * an occurrence whose message was dropped.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import type { SliceStore, WheelStore, WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import { definitionOf, type StoredJob } from '../../lib/core/job-record.ts';
import { occurrencesBetween, scheduleOf } from '../../lib/core/schedule.ts';
import { SliceStatus, type SliceKey } from '../../lib/core/slice.ts';
import { bucketOf, WHEEL_BUCKET_MS } from '../../lib/core/wheel.ts';
import { defineJob, HandlerRegistry } from '../../lib/engine/define-job.ts';
import type { Disposition } from '../../lib/engine/worker.ts';
import { deleteMessage } from '../../lib/testing/work-messages.ts';
import { createTestInstallation, eventually, type TestInstallation } from '../support/harness.ts';
import { RecordingQueue } from '../support/recording-queue.ts';
import { scannerOverRuntime } from '../support/scanner-rig.ts';

const LOOKAHEAD_MS = 30_000;
/** Where the test follows a message to its end: the reconciler and the sweep look a short grace after. */
const SWEEP_GRACE_MS = 5000;
/** Where the test scans for longer than that without delivering: nothing must look overdue. */
const LONG_GRACE_MS = 60_000;

function envOf(sweepGraceMs: number): Record<string, string> {
  return { CRONFENCE_LOOKAHEAD_MS: String(LOOKAHEAD_MS), CRONFENCE_SWEEP_GRACE_MS: String(sweepGraceMs) };
}
const HANDLER = 'h';

function keyOf(key: SliceKey): string {
  return `${key.jobId}@${new Date(key.scheduledAt).toISOString()}`;
}

/** Every occurrence of `jobs` in `[from, to)`, as keys. */
function occurrenceKeys(jobs: readonly StoredJob[], from: number, to: number): string[] {
  return jobs
    .flatMap((job) => occurrencesBetween(scheduleOf(job), from, to, 1000).map((scheduledAt) => keyOf({ jobId: job.id, scheduledAt })))
    .sort();
}

function sentKeys(messages: readonly WorkMessage[]): string[] {
  return [...new Set(messages.map(keyOf))].sort();
}

/** Counts the runs of each occurrence, by execution key. */
function countingHandlers(): { handlers: HandlerRegistry; runs: Map<string, number> } {
  const runs = new Map<string, number>();
  const handlers = new HandlerRegistry([
    defineJob(HANDLER, (ctx) => {
      runs.set(ctx.executionKey, (runs.get(ctx.executionKey) ?? 0) + 1);
      return Promise.resolve();
    }),
  ]);
  return { handlers, runs };
}

/**
 * Delivers `messages` (copies included) through the real work queue to real
 * workers, every copy of one occurrence at once on a different worker, as
 * racing deliveries would. @returns each occurrence's dispositions.
 */
async function deliver(
  installation: TestInstallation,
  messages: readonly WorkMessage[],
  handlers: HandlerRegistry,
): Promise<Map<string, Disposition[]>> {
  const { runtime } = installation;
  const url = installation.resources.queueUrls.work;
  await runtime.workQueue.send(messages.map((message) => ({ ...message, delaySeconds: 0 })));
  const received: Message[] = [];
  await eventually(
    async () => {
      received.push(...(await installation.receive(url, 10, 300)));
      return received.length >= messages.length ? true : undefined;
    },
    30_000,
    0,
  );
  expect(received).toHaveLength(messages.length);
  const copies = new Map<string, Message[]>();
  for (const message of received) {
    const key = keyOf(decodeWorkMessage(message.Body ?? ''));
    copies.set(key, [...(copies.get(key) ?? []), message]);
  }
  const workers = ['w-a', 'w-b', 'w-c'].map((id) => runtime.worker(id, handlers));
  const dispositions = new Map<string, Disposition[]>();
  for (const [key, ofKey] of copies) {
    const outcomes = await Promise.all(
      ofKey.map((message, i) =>
        workers[i % workers.length]!.process({
          body: message.Body!,
          receiptHandle: message.ReceiptHandle!,
          messageId: message.MessageId,
          receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
        }),
      ),
    );
    dispositions.set(key, outcomes);
    for (const [i, message] of ofKey.entries()) if (outcomes[i] === 'delete') await deleteMessage(runtime, message);
  }
  return dispositions;
}

/** Every occurrence ran once, from a slice its first claim created, and every copy of its message was let go. */
async function expectRanOnce(
  installation: TestInstallation,
  jobs: readonly StoredJob[],
  expected: readonly string[],
  runs: Map<string, number>,
  dispositions: Map<string, Disposition[]>,
): Promise<void> {
  expect([...dispositions.keys()].sort()).toEqual(expected);
  for (const outcomes of dispositions.values()) expect(outcomes.every((outcome) => outcome === 'delete')).toBe(true);
  for (const job of jobs) {
    const slices = await installation.runtime.jobs().slicesOf(job.id, 0);
    expect(slices.map(keyOf)).toEqual(expected.filter((key) => key.startsWith(`${job.id}@`)));
    for (const slice of slices) {
      expect(slice).toMatchObject({
        status: SliceStatus.Succeeded,
        fence: 1,
        attempts: 1,
        claimedFrom: SliceStatus.Enqueued,
        generation: job.generation,
      });
      expect(runs.get(executionKey(slice.jobId, slice.scheduledAt))).toBe(1);
    }
  }
  expect([...runs.values()].reduce((sum, count) => sum + count, 0)).toBe(expected.length);
}

/**
 * Two parties meet at named points: each waits there until the other has
 * arrived too. Both scanners read the same inbox or bucket before either acts
 * on it, so they really race (a timeout only keeps a mismatch from hanging the test).
 */
class Rendezvous {
  private readonly waiting = new Map<string, () => void>();
  missed = 0;

  meet(point: string): Promise<void> {
    const partner = this.waiting.get(point);
    if (partner) {
      this.waiting.delete(point);
      partner();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(point);
        this.missed++;
        resolve();
      }, 10_000);
      this.waiting.set(point, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** The wheel, with each inbox and bucket read followed by a meeting with the other scanner. */
function racing(wheel: WheelStore, rendezvous: Rendezvous): WheelStore {
  return {
    readCursor: (shard) => wheel.readCursor(shard),
    claim: (shard, through) => wheel.claim(shard, through),
    moveCursor: (shard, cursor) => wheel.moveCursor(shard, cursor),
    nextBucket: (shard, from, to) => wheel.nextBucket(shard, from, to),
    entriesAt: async (shard, bucket) => {
      const entries = await wheel.entriesAt(shard, bucket);
      await rendezvous.meet(`entries ${bucket}`);
      return entries;
    },
    place: (shard, entries, now) => wheel.place(shard, entries, now),
    inbox: async (shard) => {
      const entries = await wheel.inbox(shard);
      await rendezvous.meet('inbox');
      return entries;
    },
    putInbox: (shard, entry) => wheel.putInbox(shard, entry),
    takeFromInbox: (shard, entry) => wheel.takeFromInbox(shard, entry),
    setAside: (shard, record) => wheel.setAside(shard, record),
    setAsideJobs: (shard) => wheel.setAsideJobs(shard),
  };
}

/** A scanner process that dies: once `alive` is false every call of its stores fails, as if it were gone. */
function mortal<T extends object>(target: T, process: { alive: boolean }): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown =>
        process.alive
          ? (value as (...inner: unknown[]) => unknown).apply(object, args)
          : Promise.reject(new Error('the scanner process died'));
    },
  });
}

describe('two scanners racing one shard', () => {
  const start = Math.floor(Date.now() / 1000) * 1000;
  const clock = new ManualClock(start);
  let installation: TestInstallation;
  beforeAll(async () => {
    installation = await createTestInstallation({ clock, env: envOf(LONG_GRACE_MS) });
  });
  afterAll(() => installation?.destroy());

  it('send every occurrence at least once, write no slice, and the workers run each once', async () => {
    const { runtime } = installation;
    const repository = runtime.jobs();
    const jobs: StoredJob[] = [];
    for (let i = 0; i < 12; i++) {
      const schedule = i % 2 === 0 ? '*/5 * * * * *' : `${i} * * * * *`;
      jobs.push((await repository.put({ id: `race-${i}`, schedule, handler: HANDLER })).job);
    }
    const rendezvous = new Rendezvous();
    const [queueA, queueB] = [new RecordingQueue(), new RecordingQueue()];
    const a = scannerOverRuntime(runtime, 'scanner-a', { wheel: racing(runtime.wheel, rendezvous), queue: queueA });
    const b = scannerOverRuntime(runtime, 'scanner-b', { wheel: racing(runtime.wheel, rendezvous), queue: queueB });
    for (let round = 0; round < 3; round++) {
      const reports = await Promise.all([a.scanShard(0), b.scanShard(0)]);
      for (const report of reports) expect(report).toMatchObject({ errors: 0, incomplete: false, reconciled: 0, swept: 0 });
      // Well inside the grace: nothing is overdue, so every message is a first send.
      clock.advance(5000);
    }
    expect(rendezvous.missed).toBe(0);

    // Every occurrence from registration to the last scan's horizon, and nothing else.
    const expected = occurrenceKeys(jobs, start, bucketOf(start + 10_000 + LOOKAHEAD_MS));
    const all = [...queueA.sent, ...queueB.sent];
    expect(sentKeys(all)).toEqual(expected);
    // They raced: both sent some occurrences (each scanner read the buckets before the other moved the cursor).
    expect(all.length).toBeGreaterThan(expected.length);
    expect(sentKeys(queueA.sent).filter((key) => sentKeys(queueB.sent).includes(key)).length).toBeGreaterThan(0);
    // Each message names its generation; no slice was written: the claim creates it from the stored definition.
    for (const message of all) {
      const job = jobs.find((candidate) => candidate.id === message.jobId)!;
      expect(message.generation).toBe(job.generation);
    }
    for (const job of jobs) expect(await repository.slicesOf(job.id, 0)).toEqual([]);

    clock.set(bucketOf(start + 10_000 + LOOKAHEAD_MS) + 1000);
    const { handlers, runs } = countingHandlers();
    const dispositions = await deliver(installation, all, handlers);
    await expectRanOnce(installation, jobs, expected, runs, dispositions);
    // One claim per occurrence: the copies lost theirs and were dropped.
    expect(installation.events.ofType('claimed')).toHaveLength(expected.length);
  });
});

describe('a scanner that dies mid-scan', () => {
  const start = Math.floor(Date.now() / 1000) * 1000;
  const clock = new ManualClock(start);
  let installation: TestInstallation;
  const jobs: StoredJob[] = [];
  let scannedThrough = 0;
  beforeAll(async () => {
    installation = await createTestInstallation({ clock, env: envOf(LONG_GRACE_MS) });
    for (const id of ['mortal-a', 'mortal-b', 'mortal-c'])
      jobs.push((await installation.runtime.jobs().put({ id, schedule: '* * * * * *', handler: HANDLER })).job);
    // A clean first scan: the shard's cursor and the jobs' entries are in the wheel.
    const first = await scannerOverRuntime(installation.runtime, 'scanner-0', { queue: new RecordingQueue() }).scanShard(0);
    expect(first).toMatchObject({ errors: 0, incomplete: false });
    scannedThrough = bucketOf(start + LOOKAHEAD_MS);
  });
  afterAll(() => installation?.destroy());

  it('whose wheel reads start failing leaves the buckets from the failure on to the next scan, which sends them', async () => {
    const { runtime } = installation;
    clock.advance(20_000);
    const horizon = bucketOf(clock.now() + LOOKAHEAD_MS);
    let reads = 0;
    const failing: WheelStore = {
      readCursor: (shard) => runtime.wheel.readCursor(shard),
      claim: (shard, through) => runtime.wheel.claim(shard, through),
      moveCursor: (shard, cursor) => runtime.wheel.moveCursor(shard, cursor),
      nextBucket: (shard, from, to) => runtime.wheel.nextBucket(shard, from, to),
      place: (shard, entries, now) => runtime.wheel.place(shard, entries, now),
      inbox: (shard) => runtime.wheel.inbox(shard),
      putInbox: (shard, entry) => runtime.wheel.putInbox(shard, entry),
      takeFromInbox: (shard, entry) => runtime.wheel.takeFromInbox(shard, entry),
      setAside: (shard, record) => runtime.wheel.setAside(shard, record),
      setAsideJobs: (shard) => runtime.wheel.setAsideJobs(shard),
      // The third bucket's read fails: two buckets are done.
      entriesAt: (shard, bucket) => (++reads > 2 ? Promise.reject(new Error('wheel unavailable')) : runtime.wheel.entriesAt(shard, bucket)),
    };
    const broken = new RecordingQueue();
    const report = await scannerOverRuntime(runtime, 'scanner-broken', { wheel: failing, queue: broken }).scanShard(0);
    expect(report).toMatchObject({ errors: 1, incomplete: true, buckets: 2 });
    const done = scannedThrough + 2 * WHEEL_BUCKET_MS;
    expect(sentKeys(broken.sent)).toEqual(occurrenceKeys(jobs, scannedThrough, done));
    // The cursor kept the two buckets it finished, no more.
    expect((await runtime.wheel.readCursor(0))?.scannedThrough).toBe(done);

    const next = new RecordingQueue();
    expect(await scannerOverRuntime(runtime, 'scanner-next', { queue: next }).scanShard(0)).toMatchObject({ errors: 0, incomplete: false });
    expect(sentKeys(next.sent)).toEqual(occurrenceKeys(jobs, done, horizon));
    expect(sentKeys([...broken.sent, ...next.sent])).toEqual(occurrenceKeys(jobs, scannedThrough, horizon));
    scannedThrough = horizon;
  });

  it('whose process dies after a few sends, before its cursor moves, leaves its whole range to the next scan', async () => {
    const { runtime } = installation;
    clock.advance(20_000);
    const horizon = bucketOf(clock.now() + LOOKAHEAD_MS);
    const process = { alive: true };
    const dying = new RecordingQueue();
    // The process dies right after its first batch of messages went out.
    const lastWords: WorkQueue = {
      send: async (messages) => {
        if (!process.alive) throw new Error('the scanner process died');
        await dying.send(messages);
        process.alive = false;
      },
      hide: () => Promise.resolve(),
      hideBatched: () => Promise.resolve(),
    };
    const dead = scannerOverRuntime(runtime, 'scanner-dead', {
      wheel: mortal(runtime.wheel, process),
      jobs: mortal(runtime.jobReader, process),
      slices: mortal<SliceStore>(runtime.slices, process),
      queue: lastWords,
    });
    await expect(dead.scanShard(0)).rejects.toThrow('the scanner process died');
    expect(dying.sent.length).toBeGreaterThan(0);
    expect(sentKeys(dying.sent).length).toBeLessThan(occurrenceKeys(jobs, scannedThrough, horizon).length);
    expect((await runtime.wheel.readCursor(0))?.scannedThrough).toBe(scannedThrough);

    // The next scan sends the whole range again: what the dead one sent (duplicates) and what it never did.
    const next = new RecordingQueue();
    expect(await scannerOverRuntime(runtime, 'scanner-next', { queue: next }).scanShard(0)).toMatchObject({ errors: 0, incomplete: false });
    const range = occurrenceKeys(jobs, scannedThrough, horizon);
    expect(sentKeys(next.sent)).toEqual(range);

    // Processed, the duplicates are harmless: each occurrence runs once.
    clock.set(horizon + 1000);
    const { handlers, runs } = countingHandlers();
    const dispositions = await deliver(installation, [...dying.sent, ...next.sent], handlers);
    await expectRanOnce(installation, jobs, range, runs, dispositions);
  });
});

describe('the sweep', () => {
  const start = Math.floor(Date.now() / 1000) * 1000;
  const clock = new ManualClock(start);
  let installation: TestInstallation;
  beforeAll(async () => {
    installation = await createTestInstallation({ clock, env: envOf(SWEEP_GRACE_MS) });
  });
  afterAll(() => installation?.destroy());

  it('re-sends only the slices in its index whose sweep time has passed; a quiet scan re-sends nothing', async () => {
    const { runtime } = installation;
    // Disabled: the wheel has nothing of it, so every message below is the sweep's.
    const { job } = await runtime.jobs().put({ id: 'swept', schedule: '* * * * * *', handler: HANDLER, enabled: false });
    const at = (offsetMs: number): SliceKey => ({ jobId: job.id, scheduledAt: start + offsetMs });
    const run = definitionOf(job);
    await runtime.slices.enqueue(
      run,
      [
        { ...at(-60_000), sweepAt: start - 1000 },
        { ...at(-50_000), sweepAt: start },
        { ...at(-40_000), sweepAt: start + 8000 },
      ],
      start - 60_000,
    );
    // Claim-created slices are out of the index: a RUNNING one long overdue is not re-sent (the reconciler follows those)...
    expect((await runtime.slices.claim(at(-30_000), 'w1', start - 30_000, 'm1', 1, run)).won).toBe(true);
    // ...until a failure puts it in: a FAILED one whose sweep time has passed is.
    expect((await runtime.slices.claim(at(-20_000), 'w1', start - 20_000, 'm2', 1, run)).won).toBe(true);
    await runtime.slices.recordFailure(
      { key: at(-20_000), fence: 1 },
      { now: start - 19_000, error: 'boom', nextAttemptAt: start - 10_000, sweepAt: start - 5000 },
    );

    const queue = new RecordingQueue();
    const sweeper = scannerOverRuntime(runtime, 'sweeper', { queue });
    const sweep = await sweeper.scanShard(0);
    expect(sweep).toMatchObject({ swept: 3, sent: 0, reconciled: 0, errors: 0 });
    expect(sentKeys(queue.sent)).toEqual([at(-60_000), at(-50_000), at(-20_000)].map(keyOf).sort());
    // A sweep's message names the slice only: the slice exists.
    expect(queue.sent.every((message) => message.generation === undefined)).toBe(true);

    // The sweep pushed their next look out: an immediate scan is quiet.
    queue.sent.length = 0;
    expect(await sweeper.scanShard(0)).toMatchObject({ swept: 0, sent: 0, reconciled: 0 });
    expect(queue.sent).toEqual([]);

    // The third enqueued slice's time comes, before the swept ones' next look (a grace or half their age on): only it is re-sent.
    clock.set(start + 8000);
    expect(await sweeper.scanShard(0)).toMatchObject({ swept: 1, sent: 0, reconciled: 0 });
    expect(sentKeys(queue.sent)).toEqual([keyOf(at(-40_000))]);
  });
});

describe('a message dropped on its way', () => {
  // A minute's second 0 ahead: the job's only occurrence in the test, by the manual clock (SQS delays follow it, not real time).
  const due = Math.ceil(Date.now() / 60_000) * 60_000 + 60_000;
  const clock = new ManualClock(due - 3000);
  let installation: TestInstallation;
  beforeAll(async () => {
    installation = await createTestInstallation({ clock, env: envOf(SWEEP_GRACE_MS) });
  });
  afterAll(() => installation?.destroy());

  it('is recovered by the reconciler once a grace overdue: created ENQUEUED in the sweep index, sent, committed once', async () => {
    const { runtime } = installation;
    const url = installation.resources.queueUrls.work;
    const { job } = await runtime.jobs().put({ id: 'dropped', schedule: '0 * * * * *', handler: HANDLER });
    const key = { jobId: job.id, scheduledAt: due };
    clock.set(due);
    expect(await runtime.scanner('s1').scanShard(0)).toMatchObject({ sent: 1, reconciled: 0 });

    // The message is taken off the queue and never processed.
    const [dropped] = await installation.receiveSome(url, 10);
    const order = decodeWorkMessage(dropped!.Body!);
    expect(order).toEqual({ ...key, generation: job.generation });
    await deleteMessage(runtime, dropped!);
    expect(await runtime.slices.get(key)).toBeUndefined();

    // Not yet a grace past the end of its bucket: nothing is created or sent.
    clock.set(due + WHEEL_BUCKET_MS + SWEEP_GRACE_MS - 1000);
    expect(await runtime.scanner('s2').scanShard(0)).toMatchObject({ sent: 0, reconciled: 0, swept: 0 });
    expect(await runtime.slices.get(key)).toBeUndefined();
    expect(await installation.depth(url)).toBe(0);

    // A grace overdue: the reconciler creates it ENQUEUED in the sweep index and sends it.
    const reconcileAt = due + WHEEL_BUCKET_MS + SWEEP_GRACE_MS;
    clock.set(reconcileAt);
    expect(await runtime.scanner('s3').scanShard(0)).toMatchObject({ sent: 0, reconciled: 1, swept: 0, errors: 0 });
    expect(await runtime.slices.get(key)).toMatchObject({
      status: SliceStatus.Enqueued,
      fence: 0,
      generation: job.generation,
      sweepAt: reconcileAt + SWEEP_GRACE_MS,
    });

    const [recovered] = await installation.receiveSome(url, 10);
    expect(decodeWorkMessage(recovered!.Body!)).toEqual(key);
    const { handlers, runs } = countingHandlers();
    const worker = runtime.worker('w1', handlers);
    expect(
      await worker.process({ body: recovered!.Body!, receiptHandle: recovered!.ReceiptHandle!, messageId: recovered!.MessageId }),
    ).toBe('delete');
    await deleteMessage(runtime, recovered!);
    const committed = await runtime.slices.get(key);
    expect(committed).toMatchObject({ status: SliceStatus.Succeeded, fence: 1, attempts: 1, claimedFrom: SliceStatus.Enqueued });
    expect(committed?.sweepAt).toBeUndefined();
    expect(await runtime.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'w1' });

    // Had the dropped message come back after all, it would be let go: still one run.
    await runtime.workQueue.send([{ ...order, delaySeconds: 0 }]);
    const [late] = await installation.receiveSome(url, 10);
    expect(await worker.process({ body: late!.Body!, receiptHandle: late!.ReceiptHandle!, messageId: late!.MessageId })).toBe('delete');
    await deleteMessage(runtime, late!);
    expect(runs.get(executionKey(key.jobId, key.scheduledAt))).toBe(1);

    // Final: neither the reconciler nor the sweep sends it again.
    clock.set(reconcileAt + 2 * SWEEP_GRACE_MS);
    expect(await runtime.scanner('s4').scanShard(0)).toMatchObject({ sent: 0, reconciled: 0, swept: 0 });
    expect(await installation.depth(url)).toBe(0);
  });
});
