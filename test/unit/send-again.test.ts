/**
 * The engine's one retry layer for its store writes (lib/engine/send-again.ts): the adapters try once, the engine
 * sends an idempotent write again while its outcome is unknown or the store refused it for now.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { FencedOutError, StoreBusyError } from '../../lib/core/errors.ts';
import type { SliceStore } from '../../lib/core/ports.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { sendAgainWhileUnsure, WRITE_TRIES } from '../../lib/engine/send-again.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';
import { createMemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-12-07T12:00:00Z');

/** Sends with `failures` thrown in turn, then succeeds; resolves with the tries made and when each was sent (ms after T0). */
async function sendThrough(failures: unknown[], signal?: AbortSignal): Promise<{ outcome: unknown; sentAt: number[] }> {
  const clock = new VirtualClock(T0);
  const sentAt: number[] = [];
  const sent = sendAgainWhileUnsure(
    async () => {
      sentAt.push(clock.now() - T0);
      if (failures.length > 0) throw failures.shift();
      return 'written';
    },
    { clock, random: () => 0.999, ...(signal && { signal }) },
  ).catch((error: unknown) => error);
  await clock.run(T0 + 60_000);
  return { outcome: await sent, sentAt };
}

describe('sendAgainWhileUnsure', () => {
  it('sends again after a busy refusal or an unknown outcome, with full-jitter backoff from 100 ms to 1 s', async () => {
    const timeout = Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
    const { outcome, sentAt } = await sendThrough([new StoreBusyError('commit', 'ThrottlingError'), timeout, timeout, timeout]);
    expect(outcome).toBe('written');
    expect(sentAt).toEqual([0, 99, 298, 697, 1496]);
  });

  it('gives up after WRITE_TRIES, with the last error', async () => {
    const busy = Array.from({ length: 10 }, (_, i) => new StoreBusyError(`try ${i + 1}`, 'ThrottlingError'));
    const { outcome, sentAt } = await sendThrough(busy);
    expect(sentAt).toHaveLength(WRITE_TRIES);
    expect((outcome as Error).message).toContain(`try ${WRITE_TRIES}`);
  });

  it('sends a final refusal once: a lost fence is not sent again', async () => {
    const fenced = new FencedOutError('job#1', 2);
    const { outcome, sentAt } = await sendThrough([fenced]);
    expect(outcome).toBe(fenced);
    expect(sentAt).toEqual([0]);
  });

  it('sends nothing more once its signal aborted (the attempt lost its lease)', async () => {
    const lost = new AbortController();
    lost.abort();
    const { sentAt } = await sendThrough([new StoreBusyError('chunk', 'TransactionConflict')], lost.signal);
    expect(sentAt).toEqual([0]);
  });
});

describe('a DEAD record refused for now', () => {
  it('is sent again by the worker: the slice ends DEAD, not left RUNNING for a takeover', async () => {
    const engine = createMemoryEngine(new ManualClock(T0));
    const job = await engine.register({ id: 'fails', policies: { maxAttempts: 1 } }, async () => {
      throw new Error('bank unreachable');
    });
    const key = await engine.enqueue(job, T0);
    let refusals = 1;
    const busyOnce: SliceStore = Object.assign(Object.create(engine.slices) as SliceStore, {
      recordDead: (...args: Parameters<SliceStore['recordDead']>) =>
        refusals-- > 0 ? Promise.reject(new StoreBusyError('commit of fails', 'TransactionConflict')) : engine.slices.recordDead(...args),
    });
    const worker = engine.worker('w', { slices: busyOnce, random: () => 0 });
    const [message] = engine.workQueue.receive();
    expect(await engine.deliver(worker, message!)).toBe('delete');
    expect((await engine.slices.get(key))?.status).toBe(SliceStatus.Dead);
  });
});
