import { describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../lib/core/clock.ts';
import { LeaseLostError } from '../../lib/core/errors.ts';
import type { MessageBackChange, SliceStore, WorkQueue } from '../../lib/core/ports.ts';
import { LeaseKeeper, type LeaseKeeperOptions } from '../../lib/engine/lease-keeper.ts';
import { MessageHold } from '../../lib/engine/message-hold.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';
import { HeldClock } from '../support/held-clock.ts';

const key = { jobId: 'job', scheduledAt: Date.parse('2026-11-29T12:00:00Z') };
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The keeper over a hold on `queue` made as the worker makes it (received at `hiddenAt`, or at the claim). */
function makeKeeper(
  slices: SliceStore,
  queue: Pick<WorkQueue, 'hide' | 'hideBatched'>,
  clock: Clock,
  options: Omit<LeaseKeeperOptions, 'hold'> & { readonly receiptHandle: string; readonly hiddenAt?: number },
  onRenewError?: (error: unknown) => void,
): LeaseKeeper {
  const { receiptHandle, hiddenAt, ...rest } = options;
  const hold = new MessageHold(queue, clock, receiptHandle, hiddenAt ?? rest.claimedAt, rest.visibilitySeconds * 1000);
  return new LeaseKeeper(slices, clock, { ...rest, hold }, onRenewError);
}

/** Only the two calls a lease keeper makes; the store's real fencing is tested against the emulator. */
function keeperWith(
  renew: () => Promise<void>,
  claimedAt = Date.now(),
  hide?: () => Promise<void>,
  hiddenAt?: number,
  timing: { leaseMs?: number; heartbeatMs?: number } = {},
) {
  const calls: string[] = [];
  const slices = {
    renew: async (_claim: unknown, _now: number, _lease: number, change?: MessageBackChange) => (calls.push(renewCall(change)), renew()),
  } as unknown as SliceStore;
  const queue = {
    send: async () => {},
    hide: async (_handle: string, seconds: number) => {
      calls.push(`hide ${seconds}`);
      await hide?.();
    },
    hideBatched: async () => {},
  };
  const keeper = makeKeeper(slices, queue, systemClock, {
    key,
    fence: 3,
    leaseMs: timing.leaseMs ?? 400,
    heartbeatMs: timing.heartbeatMs ?? 40,
    visibilitySeconds: hide ? 1 : 3,
    receiptHandle: 'r',
    claimedAt,
    hiddenAt,
  });
  return { keeper, calls };
}

const hangs = (): Promise<void> => new Promise<void>(() => {});

/** A renewal as the timelines below name it: with the change it made to the message-back takeover. */
const renewCall = (change?: MessageBackChange): string =>
  change === undefined ? 'renew' : change === 'disarm' ? 'renew+disarm' : `renew+rearm ${change.rearm}`;

/**
 * A keeper claimed (and its message hidden) now, whose calls are recorded with their time since then: `renew` and
 * `hide` get the call's number (from 1) and a `record` for anything else worth placing on the timeline.
 */
function timedKeeper(
  options: { leaseMs: number; heartbeatMs: number; visibilitySeconds: number },
  behaviour: { renew?: (n: number, record: (call: string) => void) => Promise<void>; hide?: (n: number) => Promise<void> },
) {
  const started = Date.now();
  const timeline: { call: string; at: number }[] = [];
  const record = (call: string): void => void timeline.push({ call, at: Date.now() - started });
  let renewals = 0;
  let hides = 0;
  const slices = {
    renew: async (_c: unknown, _n: number, _l: number, change?: MessageBackChange) => {
      record(renewCall(change));
      await behaviour.renew?.(++renewals, record);
    },
  } as unknown as SliceStore;
  const queue = {
    send: async () => {},
    hide: async () => {
      record('hide');
      await behaviour.hide?.(++hides);
    },
    hideBatched: async () => {},
  };
  const keeper = makeKeeper(slices, queue, systemClock, { key, fence: 1, receiptHandle: 'r', claimedAt: started, ...options });
  const callsOf = (prefix: string): { call: string; at: number }[] => timeline.filter((entry) => entry.call.startsWith(prefix));
  return { keeper, timeline, callsOf };
}

describe('LeaseKeeper', () => {
  it('waits out its heartbeat on its clock: a minute-long heartbeat renews as soon as the clock fires it', async () => {
    const clock = new HeldClock(key.scheduledAt);
    let renewals = 0;
    const slices = { renew: async () => void renewals++ } as unknown as SliceStore;
    const queue = { send: async () => {}, hide: async () => {}, hideBatched: async () => {} };
    const timing = { leaseMs: 600_000, heartbeatMs: 60_000, visibilitySeconds: 180 };
    const keeper = makeKeeper(slices, queue, clock, { key, fence: 1, receiptHandle: 'r', claimedAt: clock.now(), ...timing });
    keeper.start();
    await wait(20);
    expect(clock.waits.map((w) => w.ms)).toEqual([60_000]);
    expect(renewals).toBe(0);
    clock.waits[0]!.release();
    await wait(20);
    expect(renewals).toBe(1);
    // The renewal's own deadline is the clock's too: the lease from the claim.
    expect(clock.waits.map((w) => w.ms)).toContain(600_000);
    await keeper.stop();
    expect(keeper.lost).toBe(false);
  });

  it('extends the message after each renewal that held', async () => {
    const { keeper, calls } = keeperWith(async () => {});
    keeper.start();
    await wait(150);
    await keeper.stop();
    expect(calls.length).toBeGreaterThanOrEqual(4);
    expect(calls.slice(0, 4)).toEqual(['renew', 'hide 3', 'renew', 'hide 3']);
    expect(keeper.lost).toBe(false);
  });

  it('counts an extension from when it was sent, not from the renewal before it: slow renewals do not disarm the takeover', async () => {
    // Heartbeat 400 ms, visibility 1 s: a renewal is disarmed when the last accepted extension is over 600 ms old.
    // Each renewal takes 400 ms, and its extension goes out after it: 400 ms before the next renewal, not 800.
    const { keeper, calls } = keeperWith(
      () => wait(400),
      Date.now(),
      async () => {},
      undefined,
      { leaseMs: 4000, heartbeatMs: 400 },
    );
    keeper.start();
    await wait(1400);
    await keeper.stop();
    // (A renewal this slow also extends the message while it is in flight: more than one hide between renewals.)
    expect(calls.slice(0, 2)).toEqual(['renew', 'hide 1']);
    expect(calls.filter((call) => call === 'renew').length).toBeGreaterThanOrEqual(2);
    expect(calls).not.toContain('renew+disarm');
  });

  it('a refused renewal (a standby took over) aborts the signal and never extends the message again', async () => {
    const { keeper, calls } = keeperWith(async () => {
      throw new LeaseLostError('job:2026-11-29T12:00:00Z', 3);
    });
    keeper.start();
    await wait(150);
    expect(keeper.lost).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(calls).toEqual(['renew']);
    await keeper.stop();
  });

  it('after a claim that took longer than a heartbeat, renews at once rather than a heartbeat later', async () => {
    const { keeper, calls } = keeperWith(async () => {}, Date.now() - 1000);
    keeper.start();
    await wait(15);
    expect(calls[0]).toBe('renew');
    await keeper.stop();
  });

  it('a renewal that never answers loses the lease when the lease runs out, not when the request returns', async () => {
    const { keeper } = keeperWith(() => new Promise<void>(() => {}));
    keeper.start();
    await wait(600); // lease 400 ms
    expect(keeper.lost).toBe(true);
    expect(keeper.signal.reason).toBeInstanceOf(LeaseLostError);
    await keeper.stop();
  });

  it('stops at once while a renewal is in flight: the end of an attempt never waits for a hung renewal', async () => {
    let release = (): void => {};
    const { keeper, calls } = keeperWith(() => new Promise<void>((resolve) => (release = resolve)));
    keeper.start();
    await wait(60); // the first renewal (after 40 ms) hangs
    expect(calls).toEqual(['renew']);
    const stopping = Date.now();
    await keeper.stop();
    expect(Date.now() - stopping).toBeLessThan(100); // not the lease's 400 ms
    expect(keeper.lost).toBe(false);
    // The renewal answering after the stop is not followed by an extension.
    release();
    await wait(20);
    expect(calls).toEqual(['renew']);
  });

  it('an extension SQS refused disarms the message-back takeover at once, not a heartbeat later', async () => {
    const calls: string[] = [];
    const slices = {
      renew: async (_c: unknown, _n: number, _l: number, change?: MessageBackChange) => void calls.push(renewCall(change)),
    } as unknown as SliceStore;
    const queue = {
      send: async () => {},
      hide: async () => {
        calls.push('hide');
        throw new Error('throttled (test)');
      },
      hideBatched: async () => {},
    };
    // Heartbeat 300 ms, visibility 3 s: the message could not surface before the next heartbeat's renewal on its own.
    const keeper = makeKeeper(
      slices,
      queue,
      systemClock,
      { key, fence: 3, leaseMs: 1200, heartbeatMs: 300, visibilitySeconds: 3, receiptHandle: 'r', claimedAt: Date.now() },
      () => {},
    );
    keeper.start();
    await wait(450);
    // Before the second heartbeat (600 ms): the disarming renewal, and the extension sent again beside it (refused again).
    expect(calls.slice(0, 2)).toEqual(['renew', 'hide']);
    expect(calls.slice(2, 4).sort()).toEqual(['hide', 'renew+disarm']);
    await wait(300);
    await keeper.stop();
    // Disarmed once: the renewals after it are plain; and sent again once, not again and again while refused.
    expect(calls.filter((call) => call === 'renew+disarm')).toHaveLength(1);
    // Each renewal tells the store whether it disarms (the drill's renewals.jsonl reads it there): the second one did.
    expect(calls.filter((call) => call.startsWith('renew')).slice(0, 3)).toEqual(['renew', 'renew+disarm', 'renew']);
    expect(calls.filter((call) => call === 'hide').length).toBeLessThanOrEqual(calls.filter((call) => call.startsWith('renew')).length + 1);
  });

  it('an extension SQS refused is sent again beside the disarming renewal: a slow renewal then leaves the message hidden', async () => {
    // A CI drill: the extension refused, the disarming renewal throttled past the moment the message surfaced, and a
    // standby took the live holder over. Here the disarming renewal takes 1.5 s; the extension must not wait for it.
    const calls: string[] = [];
    let hides = 0;
    const slices = {
      renew: async (_c: unknown, _n: number, _l: number, change?: MessageBackChange) => {
        calls.push(renewCall(change));
        if (change === 'disarm') await wait(1500);
      },
    } as unknown as SliceStore;
    const queue = {
      send: async () => {},
      hide: async () => {
        calls.push('hide');
        if (hides++ === 0) throw new Error('throttled (test)');
      },
      hideBatched: async () => {},
    };
    const keeper = makeKeeper(slices, queue, systemClock, {
      key,
      fence: 3,
      leaseMs: 4000,
      heartbeatMs: 300,
      visibilitySeconds: 3,
      receiptHandle: 'r',
      claimedAt: Date.now(),
    });
    keeper.start();
    await wait(800);
    // The disarming renewal is still in flight: the extension went out again meanwhile, and SQS accepted it.
    expect(calls).toContain('renew+disarm');
    expect(calls.filter((call) => call === 'hide')).toHaveLength(2);
    await keeper.stop();
    expect(keeper.lost).toBe(false);
  });

  it('an extension that hangs never delays a renewal, and the renewal before the message could surface disarms its takeover', async () => {
    // Visibility 1 s, heartbeat 40 ms: once 960 ms passed since the last accepted extension, the message may surface.
    const { keeper, calls } = keeperWith(
      async () => {},
      Date.now(),
      () => new Promise<void>(() => {}),
    );
    keeper.start();
    await wait(1300);
    await keeper.stop();
    const renewals = calls.filter((call) => call.startsWith('renew'));
    expect(renewals.length).toBeGreaterThanOrEqual(15);
    // One at a time, and at most a second beside the one that hangs (sent when a renewal falls in the 60 ms before the
    // message could surface: on a loaded machine none may); it hangs too.
    const hides = calls.filter((call) => call.startsWith('hide'));
    expect(hides.length === 1 || hides.length === 2).toBe(true);
    expect(new Set(hides)).toEqual(new Set(['hide 1']));
    expect(renewals.filter((call) => call === 'renew+disarm')).toHaveLength(1);
    expect(renewals.indexOf('renew+disarm')).toBeGreaterThan(10);
    expect(keeper.lost).toBe(false);
  });

  it('a slow extension that lands before the message could surface is waited for, and does not disarm the takeover', async () => {
    // Heartbeat 200 ms, visibility 1 s: the renewal at about 800 ms sees no extension accepted since the claim, but
    // the one sent at 200 ms lands at 850 ms, before the 900 ms by which a disarm would have to be sent.
    const calls: string[] = [];
    let hides = 0;
    const slices = {
      renew: async (_c: unknown, _n: number, _l: number, change?: MessageBackChange) => void calls.push(renewCall(change)),
    } as unknown as SliceStore;
    const queue = { send: async () => {}, hide: async () => (hides++ === 0 ? wait(650) : undefined), hideBatched: async () => {} };
    const keeper = makeKeeper(slices, queue, systemClock, {
      key,
      fence: 1,
      leaseMs: 2000,
      heartbeatMs: 200,
      visibilitySeconds: 1,
      receiptHandle: 'r',
      claimedAt: Date.now(),
    });
    keeper.start();
    await wait(1300);
    await keeper.stop();
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls).not.toContain('renew+disarm');
  });

  it('an extension that hangs gets a second one beside it before the message could surface: that one landing keeps the takeover armed', async () => {
    // A CI drill (2026-12-05): the extension after a renewal hung, the renewal that then disarmed went out half a
    // heartbeat before the message surfaced and was throttled past it, and a standby took over the live holder.
    // Heartbeat 200 ms, visibility 1 s: the first extension hangs; the message, hidden at the claim, would surface at
    // 1,000 ms. A second extension must go out before the disarm would (900 ms), and its landing must leave it armed.
    const { keeper, timeline, callsOf } = timedKeeper(
      { leaseMs: 2000, heartbeatMs: 200, visibilitySeconds: 1 },
      { hide: async (n) => (n === 1 ? hangs() : undefined) },
    );
    keeper.start();
    await wait(2500);
    await keeper.stop();
    const hidesAt = callsOf('hide').map((entry) => entry.at);
    expect(hidesAt.length).toBeGreaterThanOrEqual(2);
    expect(hidesAt[1]).toBeLessThan(900);
    expect(timeline.map((entry) => entry.call)).not.toContain('renew+disarm');
    // Every later extension landed before the message could surface from the one before it.
    for (let i = 2; i < hidesAt.length; i++) expect(hidesAt[i]! - hidesAt[i - 1]!).toBeLessThan(1000);
    expect(keeper.lost).toBe(false);
  });

  it('a renewal still unanswered a heartbeat before the message could surface extends it even beside an extension that hangs', async () => {
    // Heartbeat 400 ms, visibility 2 s, claimed (and hidden) at 0. The extension after the first renewal (400 ms)
    // hangs; the second renewal (800 ms) takes a second: an extension must go out before 2,000 ms, while that renewal
    // is in flight and the first extension still hangs. From then on the message never surfaces while the holder renews.
    const { keeper, timeline, callsOf } = timedKeeper(
      { leaseMs: 4000, heartbeatMs: 400, visibilitySeconds: 2 },
      { renew: async (n) => (n === 2 ? wait(1000) : undefined), hide: async (n) => (n === 1 ? hangs() : undefined) },
    );
    keeper.start();
    await wait(3700);
    await keeper.stop();
    const slowRenewalAt = callsOf('renew')[1]!.at;
    const landed = callsOf('hide')
      .slice(1)
      .map((entry) => entry.at);
    expect(landed[0]).toBeGreaterThan(slowRenewalAt);
    expect(landed[0]).toBeLessThan(Math.min(slowRenewalAt + 1000, 2000));
    for (let i = 1; i < landed.length; i++) expect(landed[i]! - landed[i - 1]!).toBeLessThan(2000);
    expect(landed.at(-1)! + 2000).toBeGreaterThan(3700);
    expect(timeline.map((entry) => entry.call)).not.toContain('renew+disarm');
    expect(keeper.lost).toBe(false);
  });

  it('an extension still unanswered when the next renewal holds gets a second beside it, not one a heartbeat before surfacing', async () => {
    // Heartbeat 400 ms, visibility 2 s, claimed (and hidden) at 0. The extension after the first renewal (400 ms)
    // hangs. The holder's idea of when the message surfaces counts from the receive's reply, late by the reply's
    // transit under load, so the renewal at 800 ms sends a second extension at once (sim loaded seed 1010).
    const { keeper, callsOf } = timedKeeper(
      { leaseMs: 4000, heartbeatMs: 400, visibilitySeconds: 2 },
      { hide: async (n) => (n === 1 ? hangs() : undefined) },
    );
    keeper.start();
    await wait(1100);
    await keeper.stop();
    const hidesAt = callsOf('hide').map((entry) => entry.at);
    const secondRenewalAt = callsOf('renew')[1]!.at;
    expect(hidesAt.length).toBeGreaterThanOrEqual(2);
    expect(hidesAt[1]! - secondRenewalAt).toBeLessThan(200);
  });

  it('after a slow claim whose message was kept hidden meanwhile, the first renewal is at once and does not disarm', async () => {
    // Claimed 1.5 s ago (more than the 960 ms threshold), but the claim phase extended the message 100 ms ago.
    const { keeper, calls } = keeperWith(
      async () => {},
      Date.now() - 1500,
      () => new Promise<void>(() => {}),
      Date.now() - 100,
    );
    keeper.start();
    await wait(15);
    expect(calls[0]).toBe('renew');
    await keeper.stop();
  });

  it('a renewal still unanswered a heartbeat before the message could surface extends the message without waiting for it', async () => {
    // Heartbeat 400 ms, visibility 1 s, claimed (and hidden) at 0: the first renewal goes out at 400 ms and answers at
    // 1,100 ms, after the message would have surfaced (1,000 ms). The extension must go out by 600 ms, while the
    // renewal is still in flight; the answer then sends the usual one after it.
    const { keeper, timeline } = timedKeeper(
      { leaseMs: 4000, heartbeatMs: 400, visibilitySeconds: 1 },
      {
        renew: async (_n, record) => {
          await wait(700);
          record('renewed');
        },
      },
    );
    keeper.start();
    await wait(1300);
    await keeper.stop();
    expect(timeline.slice(0, 4).map((entry) => entry.call)).toEqual(['renew', 'hide', 'renewed', 'hide']);
    expect(timeline[1]!.at).toBeLessThan(1000);
    expect(timeline.map((entry) => entry.call)).not.toContain('renew+disarm');
    expect(keeper.lost).toBe(false);
  });

  it('a renewal still unanswered extends the message early only while it cannot have surfaced: not after a pause', async () => {
    // As above, but the process is paused across the moment the early extension was due (its clock jumps 1 s past
    // it): by then a standby may hold the message, and a hide would keep the standby's copy hidden.
    let jumpMs = 0;
    const clock = { ...systemClock, now: () => Date.now() + jumpMs };
    const timeline: string[] = [];
    const slices = {
      renew: async () => {
        timeline.push('renew');
        await wait(700);
        timeline.push('renewed');
      },
    } as unknown as SliceStore;
    const queue = { send: async () => {}, hide: async () => void timeline.push('hide'), hideBatched: async () => {} };
    const keeper = makeKeeper(slices, queue, clock, {
      key,
      fence: 1,
      leaseMs: 4000,
      heartbeatMs: 400,
      visibilitySeconds: 1,
      receiptHandle: 'r',
      claimedAt: clock.now(),
    });
    keeper.start();
    await wait(500); // the renewal went out at 400 ms; the early extension is due at 600 ms
    jumpMs = 1000;
    await wait(800);
    await keeper.stop();
    expect(timeline.slice(0, 3)).toEqual(['renew', 'renewed', 'hide']);
  });

  describe('in virtual time (lease 4 s, heartbeat 1 s, visibility 3 s)', () => {
    const T0 = key.scheduledAt;

    /** A keeper on a virtual clock whose renewals answer in 20 ms and whose extensions do as `hide` says (n from 1). */
    function virtualKeeper(
      hide: (n: number, time: VirtualClock) => Promise<void>,
      options: { hiddenAt?: number; overtakeable?: boolean } = {},
    ) {
      const time = new VirtualClock(T0);
      const timeline: { call: string; at: number }[] = [];
      const record = (call: string): void => void timeline.push({ call, at: time.now() - T0 });
      let hides = 0;
      const slices = {
        renew: async (_c: unknown, _n: number, _l: number, change?: MessageBackChange) => {
          record(renewCall(change));
          await time.sleep(20);
        },
      } as unknown as SliceStore;
      const queue = {
        send: async () => {},
        // As the SDK does, a change ends when its abort signal fires (the hold abandons it at the receipt's lapse).
        hide: async (_receipt: string, _seconds: number, signal?: AbortSignal) => {
          record('hide');
          const aborted = new Promise<never>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
          await Promise.race([hide(++hides, time), aborted]);
        },
        hideBatched: async () => {},
      };
      const keeper = makeKeeper(
        slices,
        queue,
        time,
        {
          key,
          fence: 1,
          leaseMs: 4000,
          heartbeatMs: 1000,
          visibilitySeconds: 3,
          receiptHandle: 'r',
          claimedAt: T0,
          messageId: 'message-1',
          ...(options.hiddenAt !== undefined && { hiddenAt: options.hiddenAt }),
          ...(options.overtakeable && { overtakeable: true }),
        },
        () => {},
      );
      const renewals = (): string[] => timeline.filter((entry) => entry.call.startsWith('renew')).map((entry) => entry.call);
      return { keeper, time, timeline, renewals };
    }

    it('re-arms the takeover once its message has stayed hidden throughout: a refused extension disarms it for a heartbeat, not for good', async () => {
      const { keeper, time, renewals } = virtualKeeper(async (n, clock) => {
        await clock.sleep(20);
        if (n === 1) throw new Error('throttled (test)');
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
      const { keeper, time, renewals } = virtualKeeper((n, clock) => (n <= 2 ? hangs() : clock.sleep(20)));
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
      const { keeper, time, timeline } = virtualKeeper((_n, clock) => clock.sleep(20), { hiddenAt: T0 - 1600 });
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
      const { keeper, time, renewals } = virtualKeeper((_n, clock) => clock.sleep(20), { hiddenAt: T0 - 2200, overtakeable: true });
      keeper.start();
      await time.run(T0 + 2500);
      await keeper.stop();
      expect(renewals().slice(0, 3)).toEqual(['renew+disarm', 'renew+rearm message-1', 'renew']);
    });
  });
});
