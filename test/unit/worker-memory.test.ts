/**
 * The real Worker over the in-memory stores and queue, with a ManualClock as
 * the queue's clock and skewed copies of it as the workers' clocks. Leases and
 * heartbeats are short because the lease keeper sleeps in real time; every
 * wait is on an event the engine emits.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock, realSleep, systemClock } from '../../lib/core/clock.ts';
import { LeaseLostError } from '../../lib/core/errors.ts';
import type { JobContext } from '../../lib/engine/define-job.ts';
import { LEASE_EXPIRY_MARGIN_MS, MAX_CLOCK_SKEW_MS } from '../../lib/core/slice.ts';
import { createMemoryEngine, gate } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
/** Lease 1 s of clock time, renewed every 100 ms of real time. */
const FAST = { leaseMs: 1000, heartbeatMs: 100, timeoutMs: 30_000, backoffBaseMs: 2000, backoffMaxMs: 60_000, maxAttempts: 3 };

/** Runs until `release` opens or the signal fires (rejecting with its reason, as a well-behaved handler does). */
function held(ctx: JobContext, release: Promise<void>): Promise<void> {
  return Promise.race([release, realSleep(60_000, ctx.signal)]);
}

describe('Worker over the in-memory stores', () => {
  it('a duplicate message is dropped while the holder runs, and after it committed; the slice runs once', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const runs: string[] = [];
    const release = gate();
    const job = await engine.register({ id: 'dup', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
      await held(ctx, release.opened);
    });
    const key = await engine.enqueue(job, T0, 2);
    const [original, copy] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('holder'), original!);
    await engine.nextEvent((event) => event.type === 'started');
    expect(await engine.deliver(engine.worker('standby'), copy!)).toBe('delete');
    expect(engine.workQueue.messages().map((message) => message.messageId)).toEqual([original!.messageId]);
    release.open();
    expect(await holder).toBe('delete');
    await engine.workQueue.send([{ ...key, delaySeconds: 0 }]);
    expect(await engine.drain(engine.worker('late'))).toBe(1);
    expect(runs).toEqual(['holder']);
    expect(engine.events.events.map((event) => `${event.type}@${event.worker}`)).toEqual([
      'claimed@holder',
      'started@holder',
      'committed@holder',
    ]);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'holder', outcome: 'SUCCEEDED' });
    expect(engine.workQueue.messages()).toEqual([]);
  });

  it('two workers 4 s apart in clock: a holder that keeps renewing is never displaced by duplicates', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const runs: string[] = [];
    const release = gate();
    const job = await engine.register({ id: 'skew', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
      // Only the holder lingers: a standby that wrongly wins finishes at once, and the test fails fast.
      if (ctx.worker === 'slow-holder') await held(ctx, release.opened);
    });
    const renewals: number[] = [];
    // Due before either clock's now, so neither worker waits for the slice's second in real time.
    const key = await engine.enqueue(job, T0 - 5000);
    const renewalsSeen = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      renew: async (...args: Parameters<typeof engine.slices.renew>) => {
        await engine.slices.renew(...args);
        renewals.push(args[1]);
      },
    });
    const holderWorker = engine.worker('slow-holder', { clock: new OffsetClock(-MAX_CLOCK_SKEW_MS, queueClock), slices: renewalsSeen });
    const standby = engine.worker('fast-standby', { clock: new OffsetClock(MAX_CLOCK_SKEW_MS, queueClock) });
    const [original] = engine.workQueue.receive();
    const holder = engine.deliver(holderWorker, original!);
    await engine.nextEvent((event) => event.type === 'started');
    for (let round = 0; round < 6; round++) {
      // A heartbeat at a time, each renewal (and its extension) answered before the next: the holder is healthy. (In
      // one jump of 900 ms, most of the message's 1 s visibility, each extension would land past its receipt's margin,
      // and the holder would rightly disarm the takeover on its message back: held-message.ts.)
      for (let beat = 0; beat < 9; beat++) {
        queueClock.advance(FAST.heartbeatMs);
        const holderNow = queueClock.now() - MAX_CLOCK_SKEW_MS;
        await until(() => renewals.some((at) => at >= holderNow));
      }
      await engine.workQueue.send([{ ...key, delaySeconds: 0 }]);
      const visible = engine.workQueue.receive();
      // Only the duplicate surfaces: the holder's heartbeats keep its own message hidden.
      expect(visible.map((message) => message.messageId)).not.toContain(original!.messageId);
      expect(visible).toHaveLength(1);
      expect(await engine.deliver(standby, visible[0]!)).toBe('delete');
    }
    release.open();
    expect(await holder).toBe('delete');
    expect(runs).toEqual(['slow-holder']);
    expect(engine.events.ofType('claimed').map((event) => event.worker)).toEqual(['slow-holder']);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'slow-holder' });
  });

  it('a holder whose renewals stop is taken over when its own message comes back, and its signal fires', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const runs: string[] = [];
    let holderAbort: unknown;
    const job = await engine.register({ id: 'takeover', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
      if (ctx.worker !== 'stuck') return;
      await held(ctx, new Promise(() => {})).catch((error: unknown) => {
        holderAbort = error;
        throw error;
      });
    });
    const key = await engine.enqueue(job, T0);
    // The holder's store stops answering renewals (a partition): its lease runs out by its own reckoning.
    const silent = Object.assign(Object.create(engine.slices) as typeof engine.slices, { renew: () => new Promise<void>(() => {}) });
    const [original] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('stuck', { slices: silent }), original!);
    await engine.nextEvent((event) => event.type === 'fenced_out');
    expect(await holder).toBe('keep');
    expect(holderAbort).toBeInstanceOf(LeaseLostError);
    expect(engine.workQueue.receive()).toEqual([]);
    // Its message comes back once the visibility set at the claim (lease minus a heartbeat, 1 s) has passed.
    queueClock.advance(1000);
    expect(await engine.drain(engine.worker('standby'))).toBe(1);
    expect(runs).toEqual(['stuck', 'standby']);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 2, owner: 'standby', outcome: 'SUCCEEDED' });
  });

  it('a claim that returns after its message surfaced again starts only on a renewed lease; overtaken, it stands down unstarted', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const runs: string[] = [];
    const release = gate();
    const job = await engine.register({ id: 'slow-claim', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
      await held(ctx, release.opened);
    });
    const key = await engine.enqueue(job, T0);
    // The holder's claim is applied at once but its reply is slow (a throttled or hung extension, a slow network).
    const applied = gate();
    const replied = gate();
    const slowReply = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      claim: async (...args: Parameters<typeof engine.slices.claim>) => {
        const outcome = await engine.slices.claim(...args);
        applied.open();
        await replied.opened;
        return outcome;
      },
    });
    const [original] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('slow-claimer', { slices: slowReply }), original!);
    await applied.opened;
    // Meanwhile its message surfaced (the queue's 3 s visibility passed) and a standby's later delivery takes over.
    queueClock.advance(3500);
    const [redelivered] = engine.workQueue.receive();
    expect(redelivered!.receiveCount).toBe(2);
    const standby = engine.deliver(engine.worker('standby'), redelivered!);
    await engine.nextEvent((event) => event.type === 'started' && event.worker === 'standby');
    replied.open();
    expect(await holder).toBe('keep');
    expect(engine.events.events.filter((event) => event.worker === 'slow-claimer').map((event) => event.type)).toEqual([
      'claimed',
      'fenced_out',
    ]);
    expect(engine.events.ofType('claimed').find((event) => event.worker === 'slow-claimer')).toMatchObject({
      fence: 1,
      overtakeable: true,
    });
    release.open();
    expect(await standby).toBe('delete');
    expect(runs).toEqual(['standby']);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 2, owner: 'standby', outcome: 'SUCCEEDED' });
  });

  it('a slow claim back after its own lease ran out sends no renewal and stands down unstarted; a claim after the lease and the skew margin runs it', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const runs: string[] = [];
    const job = await engine.register({ id: 'slow-alone', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
    });
    const key = await engine.enqueue(job, T0);
    const replied = gate();
    const slowReply = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      claim: async (...args: Parameters<typeof engine.slices.claim>) => {
        const outcome = await engine.slices.claim(...args);
        await replied.opened;
        return outcome;
      },
    });
    const [original] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('slow-claimer', { slices: slowReply }), original!);
    queueClock.advance(3500);
    replied.open();
    // Its lease (1 s from the claim's send) ran out before the claim came back: a renewal sent now could land only to be
    // given up, holding standbys off for a lease no one runs under.
    expect(await holder).toBe('keep');
    expect(runs).toEqual([]);
    expect(engine.events.events.map((event) => event.type)).toEqual(['claimed', 'fenced_out']);
    queueClock.advance(FAST.leaseMs + LEASE_EXPIRY_MARGIN_MS);
    const [again] = engine.workQueue.receive();
    expect(await engine.deliver(engine.worker('later'), again!)).toBe('delete');
    expect(runs).toEqual(['later']);
    expect(await engine.slices.get(key)).toMatchObject({ status: 'SUCCEEDED', fence: 2 });
  });

  it('a receive read late is judged from its send: its holder waits for a renewal and, overtaken, stands down unstarted', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const runs: string[] = [];
    const job = await engine.register({ id: 'late-reply', policies: FAST }, async (ctx) => {
      runs.push(ctx.worker);
    });
    const key = await engine.enqueue(job, T0);
    // The holder's receive was sent at T0 and SQS hid the message then; its process read the reply 3.5 s later (paused
    // meanwhile), when the message had surfaced again and gone to a standby in a later delivery.
    const [original] = engine.workQueue.receive();
    queueClock.advance(3500);
    const [redelivered] = engine.workQueue.receive();
    expect(redelivered!.receiveCount).toBe(2);
    const standbyClaimed = gate();
    const renewsAfterStandby = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      renew: async (...args: Parameters<typeof engine.slices.renew>) => {
        await standbyClaimed.opened;
        return engine.slices.renew(...args);
      },
    });
    const holder = engine.worker('late-reader', { slices: renewsAfterStandby }).process({ ...original!, hiddenSince: T0 });
    await engine.nextEvent((event) => event.type === 'claimed' && event.worker === 'late-reader');
    const standby = engine.deliver(engine.worker('standby'), redelivered!);
    await engine.nextEvent((event) => event.type === 'claimed' && event.worker === 'standby');
    standbyClaimed.open();
    expect(await holder).toBe('keep');
    expect(await standby).toBe('delete');
    expect(runs).toEqual(['standby']);
    expect(engine.events.ofType('claimed').find((event) => event.worker === 'late-reader')).toMatchObject({ fence: 1, overtakeable: true });
    expect(engine.events.events.filter((event) => event.worker === 'late-reader').map((event) => event.type)).toEqual([
      'claimed',
      'fenced_out',
    ]);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 2, owner: 'standby', outcome: 'SUCCEEDED' });
  });

  it('a handler never starts before its second by the worker’s clock, even when a timer fires before the clock says so', async () => {
    const queueClock = new ManualClock(T0 - 400);
    const engine = createMemoryEngine(queueClock);
    // The worker's clock runs at half the timers' pace: one sleep for the gap ends with half of it still to go,
    // as a Node timer can end a millisecond before Date.now() reaches its time.
    const realStart = Date.now();
    const workerClock = { ...systemClock, now: () => T0 - 400 + Math.floor((Date.now() - realStart) / 2) };
    const startedAt: number[] = [];
    const job = await engine.register({ id: 'on-its-second', policies: FAST }, async () => {
      startedAt.push(workerClock.now());
    });
    await engine.enqueue(job, T0);
    const [message] = engine.workQueue.receive();
    expect(await engine.deliver(engine.worker('w1', { clock: workerClock }), message!)).toBe('delete');
    expect(startedAt).toHaveLength(1);
    expect(startedAt[0]).toBeGreaterThanOrEqual(T0);
    expect(engine.events.ofType('started')[0]?.startLagMs).toBeGreaterThanOrEqual(0);
  });

  it('a one-time job set to delete itself is deleted after its run even when the first delete is throttled', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const at = new Date(T0).toISOString().slice(0, 19);
    const job = await engine.register(
      { id: 'once', schedule: `at(${at})`, timeZone: 'UTC', policies: { ...FAST, afterOneTime: 'delete' } },
      async () => {},
    );
    await engine.enqueue(job, T0);
    const jobs = engine.jobs();
    let deletes = 0;
    const throttledOnce = {
      deleteAfterRun: async (id: string, generation: number) => {
        // What the SDK throws once its own three tries were all throttled (a plain SDK error, not one of ours).
        if (deletes++ === 0)
          throw Object.assign(new Error('rate of requests exceeds the allowed throughput'), { name: 'ThrottlingException' });
        await jobs.deleteAfterRun(id, generation);
      },
    };
    expect(await engine.drain(engine.worker('w1', { oneTimeJobs: throttledOnce }))).toBe(1);
    expect(deletes).toBe(2);
    expect(await jobs.get('once')).toBeUndefined();
    expect(engine.events.events.map((event) => event.type)).toEqual(['claimed', 'started', 'committed']);
  });

  it('keeps the message hidden through a slow overlap gate, so the first renewal after it does not disarm the fast takeover', async () => {
    const queueClock = new ManualClock(T0);
    const engine = createMemoryEngine(queueClock);
    const release = gate();
    const job = await engine.register({ id: 'gated', policies: { ...FAST, overlap: 'skip' } }, (ctx) => held(ctx, release.opened));
    await engine.enqueue(job, T0);
    // The gate's read takes 950 ms of clock time, passing in steps over 250 ms of real time for the hiding beats to
    // run: without an extension meanwhile, the message's 1 s visibility would be 95 % spent when the lease keeper starts.
    const slowOverlap = Object.assign(Object.create(engine.overlap) as typeof engine.overlap, {
      lane: async (...args: Parameters<typeof engine.overlap.lane>) => {
        for (let step = 0; step < 10; step++) {
          queueClock.advance(95);
          await realSleep(25);
        }
        return engine.overlap.lane(...args);
      },
    });
    const disarms: boolean[] = [];
    const recordingRenewals = Object.assign(Object.create(engine.slices) as typeof engine.slices, {
      renew: async (...args: Parameters<typeof engine.slices.renew>) => {
        disarms.push(args[3] === 'disarm');
        return engine.slices.renew(...args);
      },
    });
    const [message] = engine.workQueue.receive();
    const holder = engine.deliver(engine.worker('gated-holder', { overlap: slowOverlap, slices: recordingRenewals }), message!);
    await engine.nextEvent((event) => event.type === 'started');
    while (disarms.length === 0) await realSleep(5);
    release.open();
    expect(await holder).toBe('delete');
    expect(disarms[0]).toBe(false);
  });

  it('a bufferOne slice given back is reported buffered even when hiding its message until the retry then fails', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const release = gate();
    const job = await engine.register({ id: 'buffered', policies: { ...FAST, overlap: 'bufferOne' } }, (ctx) => held(ctx, release.opened));
    await engine.enqueue(job, T0);
    const running = engine.deliver(engine.worker('first'), engine.workQueue.receive()[0]!);
    await engine.nextEvent((event) => event.type === 'started');
    const next = await engine.enqueue(job, T0 + 1000);
    // The claim's own visibility changes go through; the gate's hide until the retry is refused (a throttle).
    const refusingHide = Object.assign(Object.create(engine.workQueue) as typeof engine.workQueue, {
      hide: async (handle: string, seconds: number, ...rest: unknown[]) => {
        if (seconds > 1) throw new Error('throttled (test)');
        return (engine.workQueue.hide as (...args: unknown[]) => Promise<void>)(handle, seconds, ...rest);
      },
    });
    clock.set(T0 + 1000);
    const outcome = await engine.deliver(engine.worker('second', { queue: refusingHide }), engine.workQueue.receive()[0]!);
    expect(outcome).toBe('keep');
    expect(await engine.slices.get(next)).toMatchObject({ status: 'ENQUEUED' });
    expect(engine.events.events.filter((event) => event.worker === 'second').map((event) => `${event.type}@${event.fence}`)).toEqual([
      'claimed@1',
      'buffered@1',
    ]);
    release.open();
    expect(await running).toBe('delete');
  });

  it('a failed attempt backs off: the message stays hidden until the retry is due, and the ceiling doubles', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    let attempts = 0;
    const job = await engine.register({ id: 'retry', policies: FAST }, async () => {
      attempts++;
      if (attempts < 3) throw new Error(`failure ${attempts}`);
    });
    const key = await engine.enqueue(job, T0);
    const worker = engine.worker('w1');
    expect(await engine.drain(worker)).toBe(1);
    // random() = 0.5 of a 2 s ceiling: the retry is 1 s away.
    expect(await engine.slices.get(key)).toMatchObject({ status: 'FAILED', nextAttemptAt: T0 + 1000, lastError: 'Error: failure 1' });
    clock.set(T0 + 999);
    expect(await engine.drain(worker)).toBe(0);
    clock.set(T0 + 1000);
    expect(await engine.drain(worker)).toBe(1);
    // The second failure's ceiling is 4 s: 2 s away.
    expect(await engine.slices.get(key)).toMatchObject({ status: 'FAILED', nextAttemptAt: T0 + 3000, attempts: 2 });
    clock.set(T0 + 2999);
    expect(await engine.drain(worker)).toBe(0);
    clock.set(T0 + 3000);
    expect(await engine.drain(worker)).toBe(1);
    expect(attempts).toBe(3);
    expect(engine.events.ofType('failed').map((event) => Date.parse(event.retryAt!) - Date.parse(event.at))).toEqual([1000, 2000]);
    expect(engine.events.ofType('claimed').map((event) => event.attempt)).toEqual([1, 2, 3]);
    expect(await engine.slices.getLedger(key)).toMatchObject({ fence: 3, outcome: 'SUCCEEDED' });
    expect(engine.deadLetters.records).toEqual([]);
  });

  it('after its last attempt a failing slice is DEAD with one dead-letter record, and runs no more', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    let attempts = 0;
    const job = await engine.register({ id: 'dead', policies: { ...FAST, maxAttempts: 2 } }, async () => {
      attempts++;
      throw new Error('always');
    });
    const key = await engine.enqueue(job, T0);
    const worker = engine.worker('w1');
    await engine.drain(worker);
    clock.set(T0 + 1000);
    await engine.drain(worker);
    expect(await engine.slices.get(key)).toMatchObject({ status: 'DEAD', attempts: 2 });
    expect(engine.deadLetters.records).toEqual([
      expect.objectContaining({ jobId: 'dead', scheduledAt: T0, attempts: 2, error: 'Error: always' }),
    ]);
    await engine.workQueue.send([{ ...key, delaySeconds: 0 }]);
    clock.set(T0 + 60_000);
    await engine.drain(worker);
    expect(attempts).toBe(2);
    expect(engine.workQueue.messages()).toEqual([]);
  });

  it('a failure or a death on record is reported even when what follows it (the hide until the retry, the dead-letter notice) is refused', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'refused', policies: { ...FAST, backoffBaseMs: 10_000, maxAttempts: 2 } }, async () => {
      throw new Error('always');
    });
    const key = await engine.enqueue(job, T0);
    // random() = 0.5 of a 10 s ceiling: the retry's hide is 5 s, refused; the lease keeper's 1 s extensions go through.
    const refusing = Object.assign(Object.create(engine.workQueue) as typeof engine.workQueue, {
      hide: async (handle: string, seconds: number, ...rest: unknown[]) => {
        if (seconds >= 5) throw new Error('throttled (test)');
        return (engine.workQueue.hide as (...args: unknown[]) => Promise<void>)(handle, seconds, ...rest);
      },
    });
    const deadLetters = Object.assign(Object.create(engine.deadLetters) as typeof engine.deadLetters, {
      send: async () => {
        throw new Error('throttled (test)');
      },
    });
    const worker = engine.worker('w1', { queue: refusing, deadLetters });
    expect(await engine.deliver(worker, engine.workQueue.receive()[0]!)).toBe('keep');
    expect(await engine.slices.get(key)).toMatchObject({ status: 'FAILED', attempts: 1 });
    clock.set(T0 + 5000);
    expect(await engine.deliver(worker, engine.workQueue.receive()[0]!)).toBe('keep');
    expect(await engine.slices.get(key)).toMatchObject({ status: 'DEAD', attempts: 2 });
    expect(engine.events.events.map((event) => `${event.type}@${event.fence}`)).toEqual([
      'claimed@1',
      'started@1',
      'failed@1',
      'claimed@2',
      'started@2',
      'dead@2',
    ]);
    // The refused dead-letter record is not sent again (docs/architecture.md): the message, back, finds the slice DEAD.
    clock.set(T0 + 60_000);
    await engine.drain(engine.worker('w2'));
    expect(engine.deadLetters.records).toEqual([]);
    expect(engine.workQueue.messages()).toEqual([]);
  });
});

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
