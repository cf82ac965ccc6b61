/** The settlement's mid-batch faults (tools/chaos/mid-batch-faults.ts), planned alike by the drill and the simulation. */
import { describe, expect, it } from 'vitest';
import { MidBatchFaults } from '../../tools/chaos/mid-batch-faults.ts';
import type { ObservedChunk } from '../../tools/chaos/observed.ts';
import { SeededRandom } from '../../tools/chaos/random.ts';

const chunk = (
  fence: number,
  n: number,
  outcome: ObservedChunk['outcome'] = 'committed',
  key = 'settle:2026-12-07T00:00:30Z',
): ObservedChunk => ({
  replica: `worker-${fence}`,
  executionKey: key,
  fence,
  chunk: n,
  outcome,
  at: n,
});

/** The chunk (1-based count of committed ones) after which the attempt of `fence` is stopped, if it is. */
function stopsAfter(faults: MidBatchFaults, fence: number, chunks: number, key?: string): number | undefined {
  for (let n = 0; n < chunks; n++) if (faults.after(chunk(fence, n, 'committed', key)) !== undefined) return n + 1;
  return undefined;
}

describe('mid-batch faults', () => {
  it('stop every first attempt after 2 to two thirds of its chunks, some second attempts after a few, no third', () => {
    const seconds: (number | undefined)[] = [];
    for (let seed = 1; seed <= 200; seed++) {
      const faults = new MidBatchFaults(new SeededRandom(seed), ['kill', 'pause'], 30);
      const first = stopsAfter(faults, 1, 30);
      expect(first).toBeGreaterThanOrEqual(2);
      expect(first).toBeLessThanOrEqual(20);
      const second = stopsAfter(faults, 2, 30);
      seconds.push(second);
      if (second !== undefined) expect(second).toBeLessThanOrEqual(8);
      expect(stopsAfter(faults, 3, 30)).toBeUndefined();
    }
    const stoppedSeconds = seconds.filter((value) => value !== undefined).length;
    expect(stoppedSeconds).toBeGreaterThan(60);
    expect(stoppedSeconds).toBeLessThan(140);
  });

  it('count committed chunks only, each settlement on its own, and plan nothing without fault kinds', () => {
    const faults = new MidBatchFaults(new SeededRandom(3), ['pause'], 6);
    for (let n = 0; n < 6; n++) expect(faults.after(chunk(1, n, 'already-committed'))).toBeUndefined();
    expect(stopsAfter(faults, 1, 6, 'settle:2026-12-07T00:01:30Z')).toBeLessThanOrEqual(4);
    expect(stopsAfter(faults, 1, 6)).toBeGreaterThanOrEqual(2);
    expect(stopsAfter(new MidBatchFaults(new SeededRandom(3), [], 6), 1, 6)).toBeUndefined();
  });
});
