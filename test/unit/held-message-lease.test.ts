import { describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/core/clock.ts';
import { LeaseLostError } from '../../lib/core/errors.ts';
import type { MessageBackChange, SliceStore, WorkQueue } from '../../lib/core/ports.ts';
import { HeldMessage, type LeaseTerms } from '../../lib/engine/held-message.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';
import { HeldClock } from '../support/held-clock.ts';

const key = { jobId: 'job', scheduledAt: Date.parse('2026-11-29T12:00:00Z') };
/** Where every virtual timeline starts: the claim, unless a test says otherwise. Times below are counted from it. */
const T0 = key.scheduledAt;

/**
 * The lease of a message held as the worker holds it (received at `hiddenAt`, or at the claim), with the lease's part
 * of its surface under short names: `start` is `startLease`, `stop` is `endLease`.
 */
function makeKeeper(
  slices: SliceStore,
  queue: Pick<WorkQueue, 'hide' | 'hideBatched'>,
  clock: Clock,
  options: LeaseTerms & { readonly receiptHandle: string; readonly hiddenAt?: number },
  onRenewError?: (error: unknown) => void,
) {
  const { receiptHandle, hiddenAt, ...terms } = options;
  const held = new HeldMessage(queue, clock, receiptHandle, hiddenAt ?? terms.claimedAt, terms.visibilitySeconds * 1000);
  return {
    held,
    start: (): void => held.startLease(slices, terms, onRenewError),
    stop: (): Promise<void> => held.endLease(),
    get signal(): AbortSignal {
      return held.leaseSignal;
    },
    get lost(): boolean {
      return held.leaseLost;
    },
    get confirmed(): Promise<void> {
      return held.leaseConfirmed;
    },
  };
}

const hangs = (): Promise<void> => new Promise<void>(() => {});

/** Lets every promise job pending run (one macrotask turn); no time passes. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A renewal as the timelines below name it: with the change it made to the message-back takeover. */
const renewCall = (change?: MessageBackChange): string =>
  change === undefined ? 'renew' : change === 'disarm' ? 'renew+disarm' : `renew+rearm ${change.rearm}`;

interface VirtualKeeperSetup {
  readonly leaseMs?: number;
  readonly heartbeatMs?: number;
  readonly visibilitySeconds?: number;
  /** When the claim set the lease (default T0), and when the receive hid the message (default: at the claim). */
  readonly claimedAt?: number;
  readonly hiddenAt?: number;
  readonly overtakeable?: boolean;
  /** The store's answer to renewal `n` (from 1); by default it holds in 20 ms. */
  readonly renew?: (n: number, time: VirtualClock, change: MessageBackChange | undefined) => Promise<void>;
  /** SQS's answer to extension `n` (from 1); by default it lands in 20 ms. */
  readonly hide?: (n: number, time: VirtualClock) => Promise<void>;
}

/**
 * A keeper on a virtual clock (lease 4 s, heartbeat 1 s, visibility 3 s unless `setup` says otherwise), claimed at T0,
 * whose calls are recorded on a timeline with their time since T0: a renewal as `renewCall` names it, an extension as
 * `hide` when it is sent. `pause(ms)` stops the process for `ms`: its clock jumps, and so its timers fire that late.
 */
function virtualKeeper(setup: VirtualKeeperSetup = {}) {
  const time = new VirtualClock(T0);
  let pausedMs = 0;
  const clock: Clock = {
    now: () => time.now() + pausedMs,
    elapsed: () => time.now() + pausedMs,
    sleep: (ms, signal) => time.sleep(ms, signal),
    timeout: (ms) => time.timeout(ms),
  };
  const timeline: { call: string; at: number }[] = [];
  const record = (call: string): void => void timeline.push({ call, at: clock.now() - T0 });
  let renewals = 0;
  let hides = 0;
  const slices = {
    renew: async (_claim: unknown, _now: number, _leaseMs: number, change?: MessageBackChange) => {
      record(renewCall(change));
      await (setup.renew ? setup.renew(++renewals, time, change) : time.sleep(20));
    },
  } as unknown as SliceStore;
  const queue = {
    send: async () => {},
    // As the SDK does, a change ends when its abort signal fires (the hold abandons it at the receipt's lapse).
    hide: async (_receipt: string, _seconds: number, signal?: AbortSignal) => {
      record('hide');
      signal?.throwIfAborted();
      const aborted = new Promise<never>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      await Promise.race([setup.hide ? setup.hide(++hides, time) : time.sleep(20), aborted]);
    },
    hideBatched: async () => {},
  };
  const keeper = makeKeeper(
    slices,
    queue,
    clock,
    {
      key,
      fence: 1,
      leaseMs: setup.leaseMs ?? 4000,
      heartbeatMs: setup.heartbeatMs ?? 1000,
      visibilitySeconds: setup.visibilitySeconds ?? 3,
      receiptHandle: 'r',
      claimedAt: setup.claimedAt ?? T0,
      messageId: 'message-1',
      ...(setup.hiddenAt !== undefined && { hiddenAt: setup.hiddenAt }),
      ...(setup.overtakeable && { overtakeable: true }),
    },
    () => {},
  );
  /** The renewals' names, in order. */
  const renewalCalls = (): string[] => timeline.filter((entry) => entry.call.startsWith('renew')).map((entry) => entry.call);
  /** When each call named `call` was made. */
  const timesOf = (call: string): number[] => timeline.filter((entry) => entry.call === call).map((entry) => entry.at);
  const pause = (ms: number): void => void (pausedMs += ms);
  return { keeper, time, timeline, renewals: renewalCalls, timesOf, pause };
}

describe('HeldMessage: the lease', () => {
  it('sends no renewal once the lease it last saw renewed has run out (woken from a pause): lost at once', async () => {
    const { keeper, time, renewals, pause } = virtualKeeper();
    keeper.start();
    await time.run(T0 + 500);
    pause(6000); // the process stops 0.5 s after its claim and wakes 2.5 s after its 4 s lease ran out
    await time.run(T0 + 1500);
    expect(renewals()).toEqual([]);
    expect(keeper.lost).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    await keeper.stop();
  });

  it('waits out its heartbeat on its clock: a minute-long heartbeat renews as soon as the clock fires it', async () => {
    const clock = new HeldClock(key.scheduledAt);
    let renewals = 0;
    const slices = { renew: async () => void renewals++ } as unknown as SliceStore;
    const queue = { send: async () => {}, hide: async () => {}, hideBatched: async () => {} };
    const timing = { leaseMs: 600_000, heartbeatMs: 60_000, visibilitySeconds: 180 };
    const keeper = makeKeeper(slices, queue, clock, { key, fence: 1, receiptHandle: 'r', claimedAt: clock.now(), ...timing });
    keeper.start();
    await settle();
    expect(clock.waits.map((w) => w.ms)).toEqual([60_000]);
    expect(renewals).toBe(0);
    clock.waits[0]!.release();
    await settle();
    expect(renewals).toBe(1);
    // The renewal's own deadline is the clock's too: the lease from the claim.
    expect(clock.waits.map((w) => w.ms)).toContain(600_000);
    await keeper.stop();
    expect(keeper.lost).toBe(false);
  });

  it('extends the message after each renewal that held', async () => {
    const { keeper, time, timeline } = virtualKeeper();
    keeper.start();
    await time.run(T0 + 2500);
    await keeper.stop();
    // Each extension is sent once its renewal's answer (20 ms) came back, never before it.
    expect(timeline).toEqual([
      { call: 'renew', at: 1000 },
      { call: 'hide', at: 1020 },
      { call: 'renew', at: 2020 },
      { call: 'hide', at: 2040 },
    ]);
    expect(keeper.lost).toBe(false);
  });

  it('counts an extension from when it was sent, not from the renewal before it: slow renewals do not disarm the takeover', async () => {
    // Heartbeat 400 ms, visibility 1 s: a renewal disarms when the last accepted extension is over 600 ms old. Each
    // renewal takes 400 ms, and its extension goes out after it: 400 ms before the next renewal, 800 ms after its start.
    const { keeper, time, timeline, renewals } = virtualKeeper({
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 1,
      renew: (_n, clock) => clock.sleep(400),
      hide: async () => {},
    });
    keeper.start();
    await time.run(T0 + 3000);
    await keeper.stop();
    // (A renewal this slow also extends the message while it is in flight: at 600 ms, a heartbeat before it could surface.)
    expect(timeline.slice(0, 4)).toEqual([
      { call: 'renew', at: 400 },
      { call: 'hide', at: 600 },
      { call: 'hide', at: 800 },
      { call: 'renew', at: 1200 },
    ]);
    expect(renewals()).toEqual(['renew', 'renew', 'renew', 'renew']);
  });

  it('a refused renewal (a standby took over) aborts the signal and never extends the message again', async () => {
    const { keeper, time, timeline } = virtualKeeper({
      renew: async (_n, clock) => {
        await clock.sleep(20);
        throw new LeaseLostError('job:2026-11-29T12:00:00Z', 1);
      },
    });
    keeper.start();
    await time.run(T0 + 1020);
    expect(keeper.lost).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    await time.run(T0 + 6000);
    expect(timeline).toEqual([{ call: 'renew', at: 1000 }]);
    await keeper.stop();
  });

  it('after a claim that took longer than a heartbeat, renews at once rather than a heartbeat later', async () => {
    // Claimed 1.2 s before the keeper starts, with a 1 s heartbeat.
    const { keeper, time, timeline } = virtualKeeper({ claimedAt: T0 - 1200 });
    keeper.start();
    await time.run(T0 + 100);
    await keeper.stop();
    expect(timeline[0]).toEqual({ call: 'renew', at: 0 });
  });

  it('a renewal that never answers loses the lease when the lease runs out, not when the request returns', async () => {
    const { keeper, time, timesOf } = virtualKeeper({ renew: hangs });
    keeper.start();
    await time.run(T0 + 3999);
    expect(timesOf('renew')).toEqual([1000]);
    expect(keeper.lost).toBe(false);
    // The lease (4 s) from the claim, the last time it was set, runs out: the signal fires then.
    await time.run(T0 + 4000);
    expect(keeper.lost).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    await keeper.stop();
  });

  it('stops at once while a renewal is in flight: the end of an attempt never waits for a hung renewal', async () => {
    let answer = (): void => {};
    const { keeper, time, timeline } = virtualKeeper({ renew: () => new Promise<void>((resolve) => (answer = resolve)) });
    keeper.start();
    await time.run(T0 + 1500); // the first renewal (at 1 s) hangs
    expect(timeline).toEqual([{ call: 'renew', at: 1000 }]);
    let stopped = false;
    const stopping = keeper.stop().then(() => (stopped = true));
    await time.run(time.now()); // every task runs, no time passes
    expect(stopped).toBe(true);
    await stopping;
    expect(keeper.lost).toBe(false);
    // The renewal answering after the stop is not followed by an extension.
    answer();
    await time.run(T0 + 6000);
    expect(timeline).toEqual([{ call: 'renew', at: 1000 }]);
    expect(keeper.lost).toBe(false);
  });

  it('an extension SQS refused disarms the message-back takeover at once, not a heartbeat later', async () => {
    // Heartbeat 1 s, visibility 3 s: the message could not surface before the next heartbeat's renewal on its own.
    const { keeper, time, renewals, timesOf } = virtualKeeper({
      hide: async (_n, clock) => {
        await clock.sleep(20);
        throw new Error('throttled (test)');
      },
    });
    keeper.start();
    await time.run(T0 + 4000);
    await keeper.stop();
    // The extension after the first renewal is refused at 1,040 ms: the disarming renewal goes out then, and the
    // extension is sent again beside it (refused again).
    expect(timesOf('renew+disarm')).toEqual([1040]);
    // Disarmed once: the renewals after it are plain; and sent again once, not again and again while refused.
    expect(renewals().slice(0, 3)).toEqual(['renew', 'renew+disarm', 'renew']);
    expect(timesOf('hide').length).toBeLessThanOrEqual(renewals().length + 1);
  });

  it('an extension SQS refused is sent again beside the disarming renewal: a slow renewal then leaves the message hidden', async () => {
    // A CI drill: the extension refused, the disarming renewal throttled past the moment the message surfaced, and a
    // standby took the live holder over. Here the first extension (1,020 ms) is refused and the disarming renewal
    // takes 2.5 s, past the 3 s at which the message, hidden at the claim, would surface: the extension sent again
    // must not wait for it.
    const { keeper, time, timeline } = virtualKeeper({
      renew: (_n, clock, change) => clock.sleep(change === 'disarm' ? 2500 : 20),
      hide: async (n, clock) => {
        await clock.sleep(20);
        if (n === 1) throw new Error('throttled (test)');
      },
    });
    keeper.start();
    await time.run(T0 + 3500);
    // The disarming renewal is still in flight: the extension went out again meanwhile, and SQS accepted it (the
    // message hidden until 4,040 ms).
    expect(timeline).toEqual([
      { call: 'renew', at: 1000 },
      { call: 'hide', at: 1020 },
      { call: 'renew+disarm', at: 1040 },
      { call: 'hide', at: 1040 },
    ]);
    await keeper.stop();
    expect(keeper.lost).toBe(false);
  });

  it('an extension that hangs never delays a renewal, and the renewal before the message could surface disarms its takeover', async () => {
    // Heartbeat 400 ms, visibility 1 s, claimed (and hidden) at 0. The extension after the first renewal hangs (the
    // hold abandons it only when that renewal's lease could have run out, at 4.4 s).
    const { keeper, time, timesOf } = virtualKeeper({ leaseMs: 4000, heartbeatMs: 400, visibilitySeconds: 1, hide: hangs });
    keeper.start();
    await time.run(T0 + 3000);
    // A heartbeat after each renewal's answer (20 ms), whatever the extension: it is sent once, and never awaited.
    expect(timesOf('hide')).toEqual([420]);
    expect(timesOf('renew')).toEqual([400, 1240, 1660, 2080, 2500, 2920]);
    // The renewal at 820 ms: with no extension landed, the message may surface (1 s) before the next one lands.
    expect(timesOf('renew+disarm')).toEqual([820]);
    expect(keeper.lost).toBe(false);
    await keeper.stop();
  });

  it('a slow extension that lands before the message could surface is waited for, and does not disarm the takeover', async () => {
    // The renewal at 2,020 ms finds no extension accepted since the claim (the message may surface at 3 s), but the one
    // sent at 1,020 ms lands at 2,300 ms, before the 2,500 ms by which a disarm would have to be sent. The one sent
    // beside it meanwhile lands later (2,420 ms).
    const { keeper, time, timeline, renewals } = virtualKeeper({ hide: (n, clock) => clock.sleep(n === 1 ? 1280 : n === 2 ? 400 : 20) });
    keeper.start();
    await time.run(T0 + 4000);
    await keeper.stop();
    expect(timeline.slice(0, 4)).toEqual([
      { call: 'renew', at: 1000 },
      { call: 'hide', at: 1020 },
      { call: 'hide', at: 2020 },
      { call: 'renew', at: 2300 }, // the renewal due at 2,020 ms, sent once the first extension landed
    ]);
    expect(renewals()).not.toContain('renew+disarm');
  });

  it('an extension that hangs gets a second one beside it before the message could surface: that one landing keeps the takeover armed', async () => {
    // A CI drill (2026-12-05): the extension after a renewal hung, the renewal that then disarmed went out half a
    // heartbeat before the message surfaced and was throttled past it, and a standby took over the live holder.
    // Heartbeat 200 ms, visibility 1 s: the first extension hangs; the message, hidden at the claim, would surface at
    // 1,000 ms. A second extension must go out before the disarm would (900 ms), and its landing must leave it armed.
    const { keeper, time, renewals, timesOf } = virtualKeeper({
      leaseMs: 2000,
      heartbeatMs: 200,
      visibilitySeconds: 1,
      hide: (n, clock) => (n === 1 ? hangs() : clock.sleep(20)),
    });
    keeper.start();
    await time.run(T0 + 2500);
    await keeper.stop();
    const hidesAt = timesOf('hide');
    expect(hidesAt.slice(0, 2)).toEqual([220, 440]);
    expect(renewals()).not.toContain('renew+disarm');
    // Every later extension was sent before the message could surface from the one before it.
    for (let i = 2; i < hidesAt.length; i++) expect(hidesAt[i]! - hidesAt[i - 1]!).toBeLessThan(1000);
    expect(keeper.lost).toBe(false);
  });

  it('a renewal still unanswered a heartbeat before the message could surface extends it even beside an extension that hangs', async () => {
    // Heartbeat 400 ms, visibility 2 s, claimed (and hidden) at 0. The extension after the first renewal (420 ms)
    // hangs; the second renewal (820 ms) takes 1.5 s: an extension must go out before 2,000 ms, while that renewal
    // is in flight and the first extension still hangs. From then on the message never surfaces while the holder renews.
    const { keeper, time, renewals, timesOf } = virtualKeeper({
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 2,
      renew: (n, clock) => clock.sleep(n === 2 ? 1500 : 20),
      hide: (n, clock) => (n === 1 ? hangs() : clock.sleep(20)),
    });
    keeper.start();
    await time.run(T0 + 4000);
    await keeper.stop();
    expect(timesOf('renew').slice(0, 2)).toEqual([400, 820]);
    const extensionsAt = timesOf('hide').slice(1);
    // A heartbeat before the message, hidden since 0, could surface (2,000 ms), the renewal still in flight.
    expect(extensionsAt[0]).toBe(1600);
    for (let i = 1; i < extensionsAt.length; i++) expect(extensionsAt[i]! - extensionsAt[i - 1]!).toBeLessThan(2000);
    expect(extensionsAt.at(-1)! + 2000).toBeGreaterThan(4000);
    expect(renewals()).not.toContain('renew+disarm');
    expect(keeper.lost).toBe(false);
  });

  it('an extension still unanswered when the next renewal holds gets a second beside it, not one a heartbeat before surfacing', async () => {
    // Heartbeat 400 ms, visibility 2 s, claimed (and hidden) at 0. The extension after the first renewal (420 ms)
    // hangs. The holder's idea of when the message surfaces counts from the receive's reply, late by the reply's
    // transit under load, so the renewal at 820 ms, once it held (840 ms), sends a second extension at once (sim
    // loaded seed 1010), not at 1,600 ms.
    const { keeper, time, timesOf } = virtualKeeper({
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 2,
      hide: (n, clock) => (n === 1 ? hangs() : clock.sleep(20)),
    });
    keeper.start();
    await time.run(T0 + 1100);
    await keeper.stop();
    expect(timesOf('renew')).toEqual([400, 820]);
    expect(timesOf('hide')).toEqual([420, 840]);
  });

  it('after a slow claim whose message was kept hidden meanwhile, the first renewal is at once and does not disarm', async () => {
    // Claimed 2.5 s ago: counted from the claim, the message (visibility 3 s) could surface before the next renewal.
    // But the claim phase extended it 100 ms ago.
    const { keeper, time, timeline } = virtualKeeper({ claimedAt: T0 - 2500, hiddenAt: T0 - 100, hide: hangs });
    keeper.start();
    await time.run(T0 + 100);
    await keeper.stop();
    expect(timeline[0]).toEqual({ call: 'renew', at: 0 });
  });

  it('a renewal still unanswered a heartbeat before the message could surface extends the message without waiting for it', async () => {
    // Heartbeat 400 ms, visibility 1 s, claimed (and hidden) at 0: the first renewal goes out at 400 ms and answers at
    // 1,100 ms, after the message would have surfaced (1,000 ms). The extension must go out at 600 ms, while the
    // renewal is still in flight; the answer then sends the usual one after it.
    const { keeper, time, timeline, renewals } = virtualKeeper({
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 1,
      renew: (_n, clock) => clock.sleep(700),
    });
    keeper.start();
    await time.run(T0 + 1300);
    await keeper.stop();
    expect(timeline.slice(0, 3)).toEqual([
      { call: 'renew', at: 400 },
      { call: 'hide', at: 600 },
      { call: 'hide', at: 1100 },
    ]);
    expect(renewals()).not.toContain('renew+disarm');
    expect(keeper.lost).toBe(false);
  });

  it('a renewal still unanswered extends the message early only while it cannot have surfaced: not after a pause', async () => {
    // As above, but the process is paused across the moment the early extension was due (600 ms): its clock jumps 1 s
    // past it, and by then a standby may hold the message, and a hide would keep the standby's copy hidden.
    const { keeper, time, timeline, pause } = virtualKeeper({
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 1,
      renew: (_n, clock) => clock.sleep(700),
    });
    keeper.start();
    await time.run(T0 + 500); // the renewal went out at 400 ms
    pause(1000);
    await time.run(T0 + 1300);
    await keeper.stop();
    // No extension until the one after the renewal's answer (700 ms after it was sent, 1 s of pause included).
    expect(timeline).toEqual([
      { call: 'renew', at: 400 },
      { call: 'hide', at: 2100 },
    ]);
  });

  it('re-arms the takeover once its message has stayed hidden throughout: a refused extension disarms it for a heartbeat, not for good', async () => {
    const { keeper, time, renewals } = virtualKeeper({
      hide: async (n, clock) => {
        await clock.sleep(20);
        if (n === 1) throw new Error('throttled (test)');
      },
    });
    keeper.start();
    await time.run(T0 + 4500);
    await keeper.stop();
    // The first extension refused: the disarming renewal at once; the one sent again beside it landed, so the message
    // never could have surfaced, and the renewal after that names the message again.
    expect(renewals().slice(0, 4)).toEqual(['renew', 'renew+disarm', 'renew+rearm message-1', 'renew']);
    expect(keeper.lost).toBe(false);
  });

  it('never re-arms once the message could have surfaced, whatever lands after', async () => {
    // The first two extensions hang: the message, hidden at the claim, may surface at 3 s. The later ones land at once,
    // sent on the lease's word past the receipt's lapse: hidden again, but a standby may have received it meanwhile.
    const { keeper, time, renewals } = virtualKeeper({ hide: (n, clock) => (n <= 2 ? hangs() : clock.sleep(20)) });
    keeper.start();
    await time.run(T0 + 12_000);
    await keeper.stop();
    expect(renewals()).toContain('renew+disarm');
    expect(renewals().filter((call) => call.startsWith('renew+rearm'))).toEqual([]);
    expect(renewals().length).toBeGreaterThanOrEqual(10);
    expect(keeper.lost).toBe(false);
  });

  it('a message received late is extended at once: its first renewal does not disarm the takeover', async () => {
    // Hidden since 1.6 s before the claim (the receive's try was sent then): it could surface at 1.4 s, before the
    // first renewal's extension lands.
    const { keeper, time, timeline } = virtualKeeper({ hiddenAt: T0 - 1600 });
    keeper.start();
    await time.run(T0 + 3500);
    await keeper.stop();
    expect(timeline.slice(0, 3)).toEqual([
      { call: 'hide', at: 0 },
      { call: 'renew', at: 1000 },
      { call: 'hide', at: 1020 },
    ]);
  });

  it('an overtakeable claim disarms at once and re-arms once the extension sent with it has landed', async () => {
    const { keeper, time, renewals } = virtualKeeper({ hiddenAt: T0 - 2200, overtakeable: true });
    keeper.start();
    await time.run(T0 + 2500);
    await keeper.stop();
    expect(renewals().slice(0, 3)).toEqual(['renew+disarm', 'renew+rearm message-1', 'renew']);
  });

  it('a re-arm whose outcome is unknown may have landed: when the message is next at risk, a renewal disarms', async () => {
    // The first extension is refused (a disarm at once), the one sent beside it lands; the re-arm then times out, and
    // every later extension hangs, so the message may surface while this holder still renews.
    const { keeper, time, renewals } = virtualKeeper({
      hide: (n, clock) => (n === 1 ? Promise.reject(new Error('throttled (test)')) : n === 2 ? clock.sleep(20) : hangs()),
      renew: (_n, clock, change) =>
        typeof change === 'object' ? clock.sleep(20).then(() => Promise.reject(new Error('timed out (test)'))) : clock.sleep(20),
    });
    keeper.start();
    await time.run(T0 + 8000);
    await keeper.stop();
    const calls = renewals();
    const rearm = calls.indexOf('renew+rearm message-1');
    expect(calls.slice(0, 2)).toEqual(['renew', 'renew+disarm']);
    expect(rearm).toBe(2);
    expect(calls.slice(rearm + 1)).toContain('renew+disarm');
    expect(keeper.lost).toBe(false);
  });

  it('a re-arm whose outcome is unknown may not have landed: while the message stays held throughout, the next renewal re-arms again', async () => {
    // The first extension is refused (a disarm at once), the one sent beside it lands; the first re-arm times out. A
    // visibility of 5 s (lease 6 s) keeps the message hidden past the next renewal all the same.
    let rearms = 0;
    const { keeper, time, renewals } = virtualKeeper({
      leaseMs: 6000,
      visibilitySeconds: 5,
      hide: (n, clock) => (n === 1 ? Promise.reject(new Error('throttled (test)')) : clock.sleep(20)),
      renew: (_n, clock, change) =>
        typeof change === 'object' && ++rearms === 1
          ? clock.sleep(20).then(() => Promise.reject(new Error('timed out (test)')))
          : clock.sleep(20),
    });
    keeper.start();
    await time.run(T0 + 6000);
    await keeper.stop();
    expect(renewals().slice(0, 5)).toEqual(['renew', 'renew+disarm', 'renew+rearm message-1', 'renew+rearm message-1', 'renew']);
    expect(keeper.lost).toBe(false);
  });

  it('an extension that lands after the receipt lapsed disarms at the next renewal: the message may have surfaced meanwhile', async () => {
    // The first renewal answers in 0.9 s, so its extension goes at 1.9 s and lands at 2.6 s: past the receipt's lapse
    // (2.5 s), so a standby may have received the message in between. By the count the message is hidden till 4.9 s
    // and the next renewal (2.9 s) need not fear its surfacing; it must disarm all the same, and never re-arm.
    const { keeper, time, renewals } = virtualKeeper({
      renew: (n, clock) => clock.sleep(n === 1 ? 900 : 20),
      hide: (n, clock) => clock.sleep(n === 1 ? 700 : 20),
    });
    keeper.start();
    await time.run(T0 + 8000);
    await keeper.stop();
    expect(renewals().slice(0, 2)).toEqual(['renew', 'renew+disarm']);
    expect(renewals().filter((call) => call.startsWith('renew+rearm'))).toEqual([]);
    expect(keeper.lost).toBe(false);
  });
});
