/**
 * The chaos work queue's record of what it sent (the drill's `sends.jsonl`):
 * a dropped message is reported at once, by its slice; a sent one only once
 * the queue took it, with the delay it went with.
 */
import { describe, expect, it } from 'vitest';
import type { WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import type { ReplicaChaosConfig } from '../../tools/chaos/config.ts';
import { chaosWorkQueue, type SentWork } from '../../tools/chaos/chaos-ports.ts';
import { SeededRandom } from '../../tools/chaos/random.ts';

const T0 = Date.parse('2026-12-05T12:00:00Z');
const NO_FAULTS: ReplicaChaosConfig = {
  seed: 1,
  clockOffsetMs: 0,
  dropRate: 0,
  duplicateRate: 0,
  replayRate: 0,
  delayRate: 0,
  ambiguousCommitRate: 0,
  throttleRate: 0,
  hangRate: 0,
  lateDuplicateRate: 0,
};

function queueTaking(taken: WorkMessage[][], refuse = false): WorkQueue {
  return {
    send: (messages) => {
      if (refuse) return Promise.reject(new Error('SQS unavailable'));
      taken.push([...messages]);
      return Promise.resolve();
    },
    hide: () => Promise.resolve(),
    hideBatched: () => Promise.resolve(),
  };
}

const messages: WorkMessage[] = [
  { jobId: 'a', scheduledAt: T0, delaySeconds: 3 },
  { jobId: 'b', scheduledAt: T0 + 1000, delaySeconds: 4 },
];

describe('chaos work queue sends', () => {
  it('reports each sent message by its slice, with the delay it went with, once the queue took it', async () => {
    const sent: SentWork[] = [];
    const taken: WorkMessage[][] = [];
    // Every message held back 1 to 5 s more.
    await chaosWorkQueue(
      queueTaking(taken),
      { ...NO_FAULTS, delayRate: 1 },
      new SeededRandom(7),
      () => {},
      (work) => sent.push(work),
    ).send(messages);
    expect(sent.map((work) => [work.executionKey, work.dropped])).toEqual([
      ['a:2026-12-05T12:00:00Z', false],
      ['b:2026-12-05T12:00:01Z', false],
    ]);
    expect(sent.map((work) => work.delaySeconds)).toEqual(taken[0]?.map((message) => message.delaySeconds));
    expect(sent.every((work, i) => work.delaySeconds > (messages[i]?.delaySeconds ?? 0))).toBe(true);
  });

  it('reports a dropped message by its slice, and a refused send not at all', async () => {
    const sent: SentWork[] = [];
    const faults: [string, string | undefined][] = [];
    await chaosWorkQueue(
      queueTaking([]),
      { ...NO_FAULTS, dropRate: 1 },
      new SeededRandom(7),
      (fault, key) => faults.push([fault, key]),
      (work) => sent.push(work),
    ).send(messages);
    expect(sent).toEqual([
      { executionKey: 'a:2026-12-05T12:00:00Z', delaySeconds: 3, dropped: true },
      { executionKey: 'b:2026-12-05T12:00:01Z', delaySeconds: 4, dropped: true },
    ]);
    expect(faults).toEqual([
      ['drop', 'a:2026-12-05T12:00:00Z'],
      ['drop', 'b:2026-12-05T12:00:01Z'],
    ]);
    const refused: SentWork[] = [];
    await expect(
      chaosWorkQueue(
        queueTaking([], true),
        NO_FAULTS,
        new SeededRandom(7),
        () => {},
        (work) => refused.push(work),
      ).send(messages),
    ).rejects.toThrow('SQS unavailable');
    expect(refused).toEqual([]);
  });
});
