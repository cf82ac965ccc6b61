/**
 * Two scans of one shard at once, one behind the other (its clock 2 s slow,
 * so its horizon a bucket short): the scan behind takes a changed job's new
 * generation up from the inbox and places its next entry in a bucket the
 * scan ahead has already read. The claim (core/wheel.ts) shows the scan
 * behind that it was read past, so it leaves the inbox entry to the next
 * scan; before the claim, the job was never sent again.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, OffsetClock } from '../../lib/core/clock.ts';
import type { WheelStore } from '../../lib/core/ports.ts';
import { MAX_CLOCK_SKEW_MS } from '../../lib/core/slice.ts';
import { createMemoryEngine, gate } from '../support/memory-engine.ts';
import { delegate, recordingQueue, scannerOver, type SentMessage } from '../support/scanner-rig.ts';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const LOOKAHEAD_MS = 20_000;
const noop = async (): Promise<void> => {};
const seconds = (sent: readonly SentMessage[], generation: number): number[] =>
  [...new Set(sent.filter((message) => message.generation === generation).map((message) => (message.scheduledAt - T0) / 1000))].sort(
    (a, b) => a - b,
  );

describe('a scan behind another', () => {
  it('leaves a generation in the inbox when its entry went where the scan ahead had claimed and read, and the next scan sends it on time', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'j', schedule: '7/10 * * * * *' }, noop);
    const sent: SentMessage[] = [];
    const queue = recordingQueue(engine.workQueue, clock, sent);
    // The first scan: buckets T0 to T0 + 15 s; the job's next entry (:27) is in the bucket of T0 + 25 s.
    await scannerOver(engine, 'first', { queue, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    expect(seconds(sent, 1)).toEqual([7, 17]);

    clock.set(T0 + 21_000);
    // Ahead: horizon T0 + 40 s. It has read the inbox (empty) when it stops, until the scan behind has read it too.
    const aheadAtInbox = gate();
    const aheadGoesOn = gate();
    const wheel: WheelStore = engine.wheel;
    const ahead: WheelStore = {
      ...delegate(wheel),
      inbox: async (shard) => {
        const inbox = await wheel.inbox(shard);
        aheadAtInbox.open();
        await aheadGoesOn.opened;
        return inbox;
      },
    };
    // Behind: 2 s slow, horizon T0 + 35 s. It has read the cursor and the inbox, and stops before it writes an entry.
    const behindAtPlace = gate();
    const behindGoesOn = gate();
    const behind: WheelStore = {
      ...delegate(wheel),
      place: async (shard, entries, now) => {
        behindAtPlace.open();
        await behindGoesOn.opened;
        return wheel.place(shard, entries, now);
      },
    };
    const aheadScan = scannerOver(engine, 'ahead', { wheel: ahead, queue, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    await aheadAtInbox.opened;
    // A change: generation 2, from :27, in the inbox.
    await engine.jobs().put({ id: job.id, schedule: '7/10 * * * * *', handler: job.id, payload: { changed: true } });
    const behindScan = scannerOver(engine, 'behind', {
      wheel: behind,
      queue,
      lookaheadMs: LOOKAHEAD_MS,
      clock: new OffsetClock(-MAX_CLOCK_SKEW_MS, clock),
    }).scanShard(0);
    await behindAtPlace.opened;
    // The scan ahead reads T0 + 20 s to T0 + 35 s before the scan behind has written anything there.
    aheadGoesOn.open();
    expect(await aheadScan).toMatchObject({ errors: 0, incomplete: false, inboxKept: 0 });
    expect(await engine.wheel.readCursor(0)).toMatchObject({ scannedThrough: T0 + 40_000, claimedThrough: T0 + 40_000 });
    behindGoesOn.open();
    // It sent :27 from its own range and placed :37 in the bucket of T0 + 35 s, past its horizon, which the scan ahead
    // had read: it keeps the inbox entry.
    expect(await behindScan).toMatchObject({ errors: 0, inboxKept: 1 });
    expect(seconds(sent, 2)).toEqual([27]);
    expect(await wheel.inbox(0)).toMatchObject([{ jobId: 'j', generation: 2 }]);

    // The next tick's scan takes the generation up again: :37 goes out before its second, and the job goes on.
    clock.set(T0 + 26_000);
    const sentBefore = sent.length;
    expect(await scannerOver(engine, 'next', { queue, lookaheadMs: LOOKAHEAD_MS }).scanShard(0)).toMatchObject({ errors: 0, inboxKept: 0 });
    expect(sent.slice(sentBefore).find((message) => message.scheduledAt === T0 + 37_000)).toMatchObject({
      sentAt: T0 + 26_000,
      delaySeconds: 11,
    });
    expect(await wheel.inbox(0)).toEqual([]);
    clock.set(T0 + 60_000);
    await scannerOver(engine, 'later', { queue, lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    expect(seconds(sent, 2)).toEqual([27, 37, 47, 57, 67, 77]);
  });
});
