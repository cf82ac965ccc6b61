/**
 * The deletes a Lambda batch leaves waiting when it returns are dropped (the event source deletes those records
 * itself), so a batch whose records finish together costs no request of its own; a delete already sent is waited for.
 * In virtual time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoalescedEntries, MAX_WAIT_MS, QUIET_MS } from '../../lib/aws/sqs/coalesced-entries.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { HeldClock } from '../support/held-clock.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function recorder() {
  const sent: string[][] = [];
  let release: () => void = () => {};
  const entries = new CoalescedEntries<string>(async (batch) => {
    sent.push([...batch]);
    await new Promise<void>((resolve) => (release = resolve));
  }, systemClock);
  return { sent, entries, release: () => release() };
}

describe('CoalescedEntries.discard', () => {
  it('drops entries still waiting: nothing is sent for them, then or later', async () => {
    const { sent, entries } = recorder();
    entries.add('a');
    await vi.advanceTimersByTimeAsync(QUIET_MS - 10);
    entries.add('b');
    await entries.discard();
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS * 2);
    expect(sent).toEqual([]);
  });

  it('keeps what went out before (a record done early while its batch-mate ran), and waits for its request', async () => {
    const { sent, entries, release } = recorder();
    entries.add('early');
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    expect(sent).toEqual([['early']]);
    entries.add('last');
    let discarded = false;
    const discarding = entries.discard().then(() => (discarded = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(discarded).toBe(false);
    release();
    await discarding;
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS * 2);
    expect(sent).toEqual([['early']]);
  });

  it('goes on coalescing after a discard', async () => {
    const { sent, entries, release } = recorder();
    entries.add('dropped');
    await entries.discard();
    entries.add('next');
    await vi.advanceTimersByTimeAsync(QUIET_MS);
    release();
    expect(sent).toEqual([['next']]);
  });
});

describe('CoalescedEntries timers', () => {
  it("are its clock's: the entries go when the clock fires the quiet wait, and the max wait is cancelled", async () => {
    const clock = new HeldClock();
    const sent: string[][] = [];
    const entries = new CoalescedEntries<string>(async (batch) => void sent.push([...batch]), clock);
    entries.add('a');
    expect(clock.waits.map((w) => w.ms)).toEqual([QUIET_MS, MAX_WAIT_MS]);
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS * 2);
    expect(sent).toEqual([]);
    clock.waits[0]!.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([['a']]);
    expect(clock.waits[1]!.signal?.aborted).toBe(true);
  });
});
