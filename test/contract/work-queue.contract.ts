/**
 * The WorkQueue contract: delays, visibility and receipt handles, as the
 * worker relies on them. Time is the fixture's: the in-memory queue's
 * ManualClock is stepped, SQS's own clock is waited out for real (so the SQS
 * run takes a few seconds a case).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, realSleep } from '../../lib/core/clock.ts';
import type { WorkQueue } from '../../lib/core/ports.ts';
import { InMemoryWorkQueue } from '../../lib/memory/index.ts';
import { createTestInstallation } from '../support/harness.ts';

interface Received {
  readonly jobId: string;
  readonly receiptHandle: string;
  readonly receiveCount: number;
}

export interface QueueContractInstallation {
  readonly queue: WorkQueue;
  /** What is visible now, hidden for `visibilitySeconds` once received. */
  receive(visibilitySeconds: number): Promise<Received[]>;
  /** Lets `ms` pass on the queue's clock. */
  wait(ms: number): Promise<void>;
  destroy(): void;
}

export const memoryQueueFactory = async (): Promise<QueueContractInstallation> => {
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  const queue = new InMemoryWorkQueue(clock);
  return {
    queue,
    receive: async (visibilitySeconds) =>
      queue.receive(clock.now(), { visibilitySeconds }).map((message) => ({
        jobId: (JSON.parse(message.body) as { jobId: string }).jobId,
        receiptHandle: message.receiptHandle,
        receiveCount: message.receiveCount,
      })),
    wait: async (ms) => clock.advance(ms),
    destroy: () => {},
  };
};

export const sqsQueueFactory = async (): Promise<QueueContractInstallation> => {
  const installation = await createTestInstallation();
  const url = installation.resources.queueUrls.work;
  return {
    queue: installation.runtime.workQueue,
    receive: async (visibilitySeconds) =>
      (await installation.receive(url, 10, visibilitySeconds)).map((message) => ({
        jobId: (JSON.parse(message.Body ?? '{}') as { jobId: string }).jobId,
        receiptHandle: message.ReceiptHandle ?? '',
        receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
      })),
    wait: (ms) => realSleep(ms),
    destroy: () => installation.destroy(),
  };
};

export function workQueueContract(label: string, factory: () => Promise<QueueContractInstallation>): void {
  describe(`WorkQueue contract: ${label}`, () => {
    let fixture: QueueContractInstallation;
    let jobs = 0;
    beforeAll(async () => {
      fixture = await factory();
    });
    afterAll(() => fixture?.destroy());
    /** Sends one message for a fresh job id; each case receives only its own. */
    const sendOne = async (delaySeconds: number): Promise<string> => {
      const jobId = `queue-case-${++jobs}`;
      await fixture.queue.send([{ jobId, scheduledAt: Date.parse('2030-01-01T00:00:00Z'), delaySeconds }]);
      return jobId;
    };
    const receiveOwn = async (jobId: string, visibilitySeconds: number) =>
      (await fixture.receive(visibilitySeconds)).filter((message) => message.jobId === jobId);

    it('a delayed message surfaces after its delay, not before', async () => {
      const jobId = await sendOne(2);
      expect(await receiveOwn(jobId, 30)).toEqual([]);
      await fixture.wait(2500);
      expect(await receiveOwn(jobId, 30)).toEqual([expect.objectContaining({ jobId, receiveCount: 1 })]);
    });

    it('a received message stays hidden for the visibility timeout, then comes back under a new receipt handle', async () => {
      const jobId = await sendOne(0);
      const [first] = await receiveOwn(jobId, 2);
      expect(first).toBeDefined();
      expect(await receiveOwn(jobId, 2)).toEqual([]);
      await fixture.wait(2500);
      const [second] = await receiveOwn(jobId, 30);
      expect(second).toMatchObject({ jobId, receiveCount: 2 });
      expect(second!.receiptHandle).not.toBe(first!.receiptHandle);
    });

    it('hide with the current receipt handle sets the visibility from now; hide(…, 0) shows it at once', async () => {
      const jobId = await sendOne(0);
      const [received] = await receiveOwn(jobId, 30);
      await fixture.queue.hide(received!.receiptHandle, 0);
      const [again] = await receiveOwn(jobId, 30);
      expect(again).toMatchObject({ jobId, receiveCount: 2 });
      await fixture.queue.hide(again!.receiptHandle, 2);
      expect(await receiveOwn(jobId, 30)).toEqual([]);
      await fixture.wait(2500);
      expect(await receiveOwn(jobId, 30)).toEqual([expect.objectContaining({ jobId, receiveCount: 3 })]);
    });

    // The emulator applies a stale handle's hide; the in-memory queue does too, so engine tests see a zombie's late
    // hide as it can happen (nothing may depend on a stale handle being refused).
    it("hide with an earlier receive's handle does not throw, and still moves the message's visibility", async () => {
      const jobId = await sendOne(0);
      const [first] = await receiveOwn(jobId, 1);
      await fixture.wait(1500);
      const [second] = await receiveOwn(jobId, 30);
      expect(second).toMatchObject({ receiveCount: 2 });
      await expect(fixture.queue.hide(first!.receiptHandle, 0)).resolves.toBeUndefined();
      expect(await receiveOwn(jobId, 30)).toEqual([expect.objectContaining({ jobId, receiveCount: 3 })]);
    });

    it('a handle no receive gave is ignored', async () => {
      const jobId = await sendOne(0);
      await expect(fixture.queue.hide('not-a-receipt-handle', 0)).resolves.toBeUndefined();
      expect(await receiveOwn(jobId, 30)).toEqual([expect.objectContaining({ jobId, receiveCount: 1 })]);
    });
  });
}
