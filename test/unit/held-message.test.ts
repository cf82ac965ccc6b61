import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { HeldMessage } from '../../lib/engine/held-message.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';

const T0 = Date.parse('2026-12-06T12:00:00Z');

function recordingQueue(behaviour: (signal?: AbortSignal) => Promise<void> = async () => {}) {
  const hides: { seconds: number; batched: boolean }[] = [];
  return {
    hides,
    hide: async (_receipt: string, seconds: number, signal?: AbortSignal) => {
      hides.push({ seconds, batched: false });
      await behaviour(signal);
    },
    hideBatched: async (_receipt: string, seconds: number, signal?: AbortSignal) => {
      hides.push({ seconds, batched: true });
      await behaviour(signal);
    },
  };
}

/** A queue whose changes never answer: each ends only when its signal aborts, which `aborted` records (ms after T0). */
function hangingQueue(time: VirtualClock) {
  const aborted: { afterMs?: number } = {};
  const queue = recordingQueue(
    (signal) =>
      new Promise<void>((_resolve, reject) =>
        signal?.addEventListener('abort', () => {
          aborted.afterMs = time.now() - T0;
          reject(signal.reason);
        }),
      ),
  );
  return { queue, aborted };
}

describe('HeldMessage: the message', () => {
  it('sends a change while the receipt holds the message, and counts the new visibility from the change', async () => {
    const clock = new ManualClock(T0);
    const queue = recordingQueue();
    const hold = new HeldMessage(queue, clock, 'r1', T0, 3000);
    clock.advance(2000);
    expect(await hold.hide(5)).toBe(true);
    expect(hold.surfacesAt).toBe(T0 + 2000 + 5000);
    expect(await hold.hide(1, { batched: true })).toBe(true);
    expect(queue.hides).toEqual([
      { seconds: 5, batched: false },
      { seconds: 1, batched: true },
    ]);
  });

  it('sends nothing once the message could have surfaced (half a second of margin): another consumer may hold it', async () => {
    const clock = new ManualClock(T0);
    const queue = recordingQueue();
    const hold = new HeldMessage(queue, clock, 'r1', T0, 3000);
    clock.advance(2500);
    expect(hold.lapsed()).toBe(true);
    expect(await hold.hide(5)).toBe(false);
    expect(queue.hides).toEqual([]);
  });

  it('after a renewal held, the lease says whose the message is: a lapsed receipt still sends', async () => {
    const clock = new ManualClock(T0);
    const queue = recordingQueue();
    const hold = new HeldMessage(queue, clock, 'r1', T0, 3000);
    clock.advance(4000);
    expect(await hold.hide(3, { leaseHeldUntil: T0 + 7000 })).toBe(true);
    expect(hold.surfacesAt).toBe(T0 + 7000);
  });

  it('counts on a reading that never steps: the wall clock stepped back does not give the message more time', async () => {
    const clock = new ManualClock(T0);
    const hold = new HeldMessage(recordingQueue(), clock, 'r1', T0, 3000);
    clock.advance(1000);
    clock.set(clock.now() - 1200); // NTP steps the worker's clock back
    expect(hold.msUntilSurfacing()).toBe(2000);
    expect(hold.surfacesAt).toBe(T0 - 200 + 2000);
    clock.advance(1500);
    expect(hold.lapsed()).toBe(true);
    expect(hold.heldThroughout()).toBe(false);
  });

  it('abandons a change that has not landed when the receipt lapses: a hung request is not left to land under a standby', async () => {
    const time = new VirtualClock(T0);
    const { queue, aborted } = hangingQueue(time);
    const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
    const hidden = hold.hide(3);
    const outcome = hidden.then(
      () => 'landed',
      (error: unknown) => (error as Error).name,
    );
    await time.run(T0 + 10_000);
    expect(await outcome).toBe('TimeoutError');
    expect(aborted.afterMs).toBe(2500);
    expect(hold.surfacesAt).toBe(T0 + 3000);
  });

  it('abandons a change sent on a renewal once that lease could have run out: a try retried after a pause lands on no standby`s copy', async () => {
    const time = new VirtualClock(T0);
    const { queue, aborted } = hangingQueue(time);
    const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
    const outcome = hold.hide(3, { leaseHeldUntil: T0 + 4000 }).then(
      () => 'landed',
      (error: unknown) => (error as Error).name,
    );
    await time.run(T0 + 10_000);
    expect(await outcome).toBe('TimeoutError');
    expect(aborted.afterMs).toBe(4000);
    expect(hold.surfacesAt).toBe(T0 + 3000);
  });
  it('is held throughout while every change landed before the receipt lapsed; one that landed after breaks it for good', async () => {
    const time = new VirtualClock(T0);
    let delayMs = 0;
    const queue = recordingQueue(() => time.sleep(delayMs));
    const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
    expect(hold.heldThroughout()).toBe(true);
    delayMs = 500;
    const inTime = hold.hide(3);
    await time.run(T0 + 1000);
    await inTime;
    expect(hold.heldThroughout()).toBe(true);
    // Lapses at T0 + 3000 (sent at T0) - 500 = 2500; sent at 1000 on a renewal's lease, it lands at 4000.
    delayMs = 3000;
    const late = hold.hide(3, { leaseHeldUntil: T0 + 5000 });
    await time.run(T0 + 4000);
    await late;
    // Counted from its send (1000 + 3000), but it may have surfaced between 2500 and its landing.
    expect(hold.surfacesAt).toBe(T0 + 4000);
    delayMs = 0;
    const again = hold.hide(3, { leaseHeldUntil: T0 + 6000 });
    await time.run(T0 + 4000);
    expect(await again).toBe(true);
    expect(hold.lapsed()).toBe(false);
    expect(hold.heldThroughout()).toBe(false);
  });

  it('is not held throughout once its receipt lapsed, whatever a change sent on a renewal lease did after', async () => {
    const time = new VirtualClock(T0);
    const hold = new HeldMessage(recordingQueue(), time, 'r1', T0, 3000);
    await time.run(T0 + 2600);
    expect(hold.heldThroughout()).toBe(false);
    expect(await hold.hide(3, { leaseHeldUntil: T0 + 4000 })).toBe(true);
    expect(hold.lapsed()).toBe(false);
    expect(hold.heldThroughout()).toBe(false);
  });

  describe('keepHiddenWhile', () => {
    const pace = { everyMs: 1000, seconds: 3 };

    it('sends no change when the work ends before the first beat', async () => {
      const time = new VirtualClock(T0);
      const queue = recordingQueue();
      const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
      const result = hold.keepHiddenWhile(() => time.sleep(900).then(() => 'claimed'), pace);
      await time.run(T0 + 5000);
      expect(await result).toBe('claimed');
      expect(queue.hides).toEqual([]);
    });

    it('hides the message every beat while the work runs, and stops when it ends', async () => {
      const time = new VirtualClock(T0);
      const queue = recordingQueue();
      const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
      const result = hold.keepHiddenWhile(() => time.sleep(3500), pace);
      await time.run(T0 + 10_000);
      await result;
      expect(queue.hides).toEqual([1, 2, 3].map(() => ({ seconds: 3, batched: false })));
      expect(hold.surfacesAt).toBe(T0 + 3000 + 3000);
    });

    it('counts its first beat from the last accepted hide: a message read late is hidden again at once', async () => {
      const time = new VirtualClock(T0);
      const queue = recordingQueue();
      // Hidden since 1.6 s before the work starts (a receive's reply read late): a first beat a whole `everyMs` after
      // the start would find the receipt lapsed (2.5 s) and send nothing, and the claim would come back overtakeable.
      const hold = new HeldMessage(queue, time, 'r1', T0 - 1600, 3000);
      const result = hold.keepHiddenWhile(() => time.sleep(900), pace);
      await time.run(T0 + 900);
      await result;
      expect(queue.hides).toEqual([{ seconds: 3, batched: false }]);
      expect(hold.msSinceHidden()).toBe(900);
      expect(hold.heldThroughout()).toBe(true);
    });

    describe('mayHaveSurfaced, as a claim is judged', () => {
      /** A claim of 100 ms on a message received 2 s before it started (read late), judged as the worker judges it. */
      async function judgeLateClaim(time: VirtualClock, queue: ReturnType<typeof recordingQueue>) {
        const hold = new HeldMessage(queue, time, 'r1', T0 - 2000, 3000);
        const judged = hold
          .keepHiddenWhile(() => time.sleep(100), pace)
          .then(() => hold.mayHaveSurfaced(1000))
          .then((surfaced) => ({ surfaced, atMs: time.now() - T0 }));
        await time.run(T0 + 5000);
        return judged;
      }

      it('waits for the change still in flight: landed before the receipt lapsed, the message never surfaced', async () => {
        const time = new VirtualClock(T0);
        const queue = recordingQueue(() => time.sleep(300));
        // Without the wait, 2.1 s since the hide with a 3 s visibility: within a heartbeat of surfacing.
        expect(await judgeLateClaim(time, queue)).toEqual({ surfaced: false, atMs: 300 });
      });

      it('a change abandoned at the receipt’s lapse leaves the message possibly surfaced, and is not waited for past it', async () => {
        const time = new VirtualClock(T0);
        const { queue } = hangingQueue(time);
        expect(await judgeLateClaim(time, queue)).toEqual({ surfaced: true, atMs: 500 });
      });

      it('does not wait when the message is far from surfacing', async () => {
        const time = new VirtualClock(T0);
        const { queue } = hangingQueue(time);
        const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
        void hold.hide(3).catch(() => {});
        expect(await hold.mayHaveSurfaced(1000)).toBe(false);
        expect(time.now()).toBe(T0);
      });
    });

    it('reports a refused change and tries again at the next beat; the work goes on, and its own error still comes back', async () => {
      const time = new VirtualClock(T0);
      const queue = recordingQueue(() => Promise.reject(new Error('throttled')));
      const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
      const errors: unknown[] = [];
      const result = hold.keepHiddenWhile(() => time.sleep(2200).then(() => Promise.reject(new Error('claim failed'))), {
        ...pace,
        onError: (error) => errors.push(error),
      });
      const outcome = result.then(
        () => 'resolved',
        (error: unknown) => (error as Error).message,
      );
      await time.run(T0 + 5000);
      expect(await outcome).toBe('claim failed');
      expect(errors.map((error) => (error as Error).message)).toEqual(['throttled', 'throttled']);
    });

    it('sends nothing more once the receipt has lapsed: another consumer may hold the message', async () => {
      const time = new VirtualClock(T0);
      let refuse = true;
      const queue = recordingQueue(() => (refuse ? Promise.reject(new Error('throttled')) : Promise.resolve()));
      const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
      const result = hold.keepHiddenWhile(() => time.sleep(6000), { ...pace, onError: () => {} });
      await time.run(T0 + 2400);
      refuse = false; // the queue recovers after the receipt lapsed (2.5 s): too late to hide this copy
      await time.run(T0 + 10_000);
      await result;
      expect(queue.hides.length).toBe(2);
    });

    it('returns when the work ends, without waiting for a change still in flight', async () => {
      const time = new VirtualClock(T0);
      const { queue, aborted } = hangingQueue(time);
      const hold = new HeldMessage(queue, time, 'r1', T0, 3000);
      let returnedAt = 0;
      const result = hold.keepHiddenWhile(() => time.sleep(1500), pace).then(() => (returnedAt = time.now() - T0));
      await time.run(T0 + 10_000);
      await result;
      expect(returnedAt).toBe(1500);
      // The change sent at the first beat is abandoned at the receipt's lapse on its own.
      expect(aborted.afterMs).toBe(2500);
    });
  });
});
