import { describe, expect, it } from 'vitest';
import { systemClock } from '../../lib/core/clock.ts';
import { keepHidden } from '../../lib/engine/keep-hidden.ts';

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function recordingQueue(fail = false) {
  const hides: { handle: string; seconds: number }[] = [];
  return {
    hides,
    hide: async (handle: string, seconds: number) => {
      hides.push({ handle, seconds });
      if (fail) throw new Error('queue unavailable');
    },
  };
}

describe('keepHidden', () => {
  it('sends no request when the work finishes before the first beat', async () => {
    const queue = recordingQueue();
    expect(await keepHidden(queue, 'r1', { clock: systemClock, everyMs: 200, visibilitySeconds: 3 }, async () => 'done')).toBe('done');
    await wait(300);
    expect(queue.hides).toEqual([]);
  });

  it('extends the message every beat while slow work runs, and stops when it ends', async () => {
    const queue = recordingQueue();
    await keepHidden(queue, 'r1', { clock: systemClock, everyMs: 50, visibilitySeconds: 3 }, () => wait(280));
    const during = queue.hides.length;
    expect(during).toBeGreaterThanOrEqual(3);
    expect(queue.hides.every((hide) => hide.handle === 'r1' && hide.seconds === 3)).toBe(true);
    await wait(200);
    expect(queue.hides.length).toBe(during);
  });

  it('reports a failed extension and lets the work finish; the work’s own error still surfaces', async () => {
    const queue = recordingQueue(true);
    const errors: unknown[] = [];
    await keepHidden(queue, 'r1', { clock: systemClock, everyMs: 30, visibilitySeconds: 3, onError: (error) => errors.push(error) }, () =>
      wait(100),
    );
    expect(errors.length).toBeGreaterThan(0);
    await expect(
      keepHidden(queue, 'r1', { clock: systemClock, everyMs: 30, visibilitySeconds: 3 }, () => Promise.reject(new Error('claim failed'))),
    ).rejects.toThrow('claim failed');
  });

  it('returns when the work ends, without waiting for an extension still in flight', async () => {
    let extensionLanded = false;
    const slowQueue = {
      hide: async () => {
        await wait(2000);
        extensionLanded = true;
      },
    };
    // The first beat at 20 ms sends an extension that takes 2 s; the work ends at 100 ms.
    const result = await keepHidden(slowQueue, 'r1', { clock: systemClock, everyMs: 20, visibilitySeconds: 3 }, async () => {
      await wait(100);
      return 'claimed';
    });
    expect(result).toBe('claimed');
    expect(extensionLanded).toBe(false);
  });
});
