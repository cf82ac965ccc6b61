/**
 * A message whose claim fails on a store error comes back soon, later with
 * each delivery: 1 s after its first, then full-jittered exponential backoff
 * up to 16 s. At a fixed second, a table that stayed throttled was sent a
 * claim for every pending slice each second and never recovered (a LocalStack
 * drill in CI, 2026-12-03).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { StoreBusyError } from '../../lib/core/errors.ts';
import type { SliceStore, WorkQueue } from '../../lib/core/ports.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');

async function hiddenForAfterError(receiveCount: number, random: number): Promise<number[]> {
  const engine = createMemoryEngine(new ManualClock(T0));
  const job = await engine.register({ id: 'busy' }, async () => {});
  await engine.enqueue(job, T0);
  const [message] = engine.workQueue.receive();
  const throttled: SliceStore = Object.assign(Object.create(engine.slices) as SliceStore, {
    claim: () => Promise.reject(new StoreBusyError('claim of busy', 'ThrottlingException')),
  });
  const hides: number[] = [];
  const queue: WorkQueue = Object.assign(Object.create(engine.workQueue) as WorkQueue, {
    hide: async (_receiptHandle: string, seconds: number) => {
      hides.push(seconds);
    },
  });
  const worker = engine.worker('w', { slices: throttled, queue, random: () => random });
  await expect(worker.process({ ...message!, receiveCount })).rejects.toThrow(StoreBusyError);
  return hides;
}

describe('a message whose claim failed on a store error', () => {
  it('comes back after 1 s on its first delivery, whatever the jitter', async () => {
    expect(await hiddenForAfterError(1, 0.999)).toEqual([1]);
    expect(await hiddenForAfterError(1, 0)).toEqual([1]);
  });

  it('comes back later with each delivery, up to 16 s, jittered from 1 s', async () => {
    expect(await hiddenForAfterError(2, 0.999)).toEqual([2]);
    expect(await hiddenForAfterError(3, 0.999)).toEqual([4]);
    expect(await hiddenForAfterError(5, 0.999)).toEqual([16]);
    expect(await hiddenForAfterError(40, 0.999)).toEqual([16]);
    expect(await hiddenForAfterError(40, 0)).toEqual([1]);
  });
});
