/**
 * The outbox against the emulator and a mock bank over HTTP: the Lambda
 * handler delivers each committed request with its idempotency key and fence,
 * retries what the bank refuses for now, and dead-letters what keeps failing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionKey } from '../../lib/core/execution-key.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { createOutboxHandler } from '../../lib/lambda/outbox-handler.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
const log = { error: () => {}, info: () => {} };
beforeAll(async () => {
  installation = await createTestInstallation();
});
afterAll(() => installation?.destroy());

/** A claimed slice with one committed chunk holding `wires` outbound requests to `url`. */
async function committedWires(jobId: string, url: string, wires: number): Promise<string> {
  const { runtime } = installation;
  const { key } = await enqueuedSlice(installation, { id: jobId }, wholeSecond(60_000));
  const claim = await runtime.slices.claim(key, 'worker-a', Date.now());
  if (!claim.won) throw new Error('claim lost');
  const outbox = Array.from({ length: wires }, (_, i) => ({ key: `m${i}`, url: `${url}/wires`, body: JSON.stringify({ i }) }));
  await runtime.chunks.commitChunk({ key, fence: claim.slice.fence, owner: 'worker-a', now: Date.now(), chunk: 0, writes: [], outbox });
  return executionKey(key.jobId, key.scheduledAt);
}

describe('outbox dispatcher (Lambda handler)', () => {
  it('delivers each request at least once with its idempotency key and fence; the bank books each once', async () => {
    let seed = 7;
    const bank = await new MockBank({
      unavailableRate: 0.3,
      dropAfterBookingRate: 0.3,
      random: () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646,
    }).start();
    try {
      const id = await committedWires('outbox-deliver', bank.url, 10);
      const handler = createOutboxHandler(installation.runtime, log, {
        backoff: { baseMs: 10, maxMs: 50 },
        takeMs: 1000,
        budgetMs: 30_000,
      });
      for (let run = 0; run < 20 && (await installation.runtime.outbox.list(id)).some((item) => item.status === 'PENDING'); run++) {
        await handler();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const items = await installation.runtime.outbox.list(id);
      expect(items.map((item) => item.status)).toEqual(Array(10).fill('DELIVERED'));
      expect([...bank.booked.keys()].sort()).toEqual(items.map((item) => item.idempotencyKey).sort());
      expect([...bank.booked.values()].map((wire) => wire.fence)).toEqual(Array(10).fill('1'));
      // Dropped answers were sent again under the same key: more deliveries than wires, never a second booking.
      expect(bank.replays + bank.refused).toBeGreaterThan(0);
      expect(items.reduce((sum, item) => sum + item.deliveries, 0)).toBe(10 + bank.replays + bank.refused);
    } finally {
      await bank.close();
    }
  });

  it('dead-letters a request after maxDeliveries failures, with a dead-letter record', async () => {
    const bank = await new MockBank({ unavailableRate: 1 }).start();
    try {
      const id = await committedWires('outbox-dead', bank.url, 1);
      const handler = createOutboxHandler(installation.runtime, log, {
        backoff: { baseMs: 10, maxMs: 20 },
        maxDeliveries: 3,
        takeMs: 1000,
        budgetMs: 20_000,
      });
      for (let run = 0; run < 20 && (await installation.runtime.outbox.list(id)).some((item) => item.status === 'PENDING'); run++) {
        await handler();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await installation.runtime.outbox.list(id)).toMatchObject([
        { status: 'DEAD', deliveries: 3, lastStatusCode: 503, lastError: 'HTTP 503' },
      ]);
      expect(bank.booked.size).toBe(0);
      const [dead] = await installation.receiveSome(installation.resources.queueUrls.deadLetter, 10);
      expect(JSON.parse(dead!.Body!)).toMatchObject({ executionKey: `${id}#m0`, attempts: 3 });
    } finally {
      await bank.close();
    }
  });
});
