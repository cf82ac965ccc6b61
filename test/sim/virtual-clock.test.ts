import { describe, expect, it } from 'vitest';
import { sleepUntil } from '../../lib/core/clock.ts';
import { SimProcess } from '../../tools/sim/sim-process.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';

const START = Date.UTC(2026, 4, 4);

describe('VirtualClock', () => {
  it('advances to each timer only once every task waits, and fires timers due at one instant in the order set', async () => {
    const time = new VirtualClock(START);
    const seen: string[] = [];
    const task = async (name: string, steps: number[]): Promise<void> => {
      for (const ms of steps) {
        await time.sleep(ms);
        // Work between timers runs at the instant its timer fired: no time passes while it runs.
        await Promise.resolve();
        seen.push(`${name}@${time.now() - START}`);
      }
    };
    void task('a', [100, 100]);
    void task('b', [200, 50]);
    await time.run(START + 10_000);
    expect(seen).toEqual(['a@100', 'b@200', 'a@200', 'b@250']);
    expect(time.now()).toBe(START + 10_000);
  });

  it('stops at `until`, leaving later timers for the next run', async () => {
    const time = new VirtualClock(START);
    let fired = false;
    void time.sleep(5000).then(() => (fired = true));
    await time.run(START + 4999);
    expect(fired).toBe(false);
    await time.run(START + 5000);
    expect(fired).toBe(true);
  });

  it('rejects a sleep whose signal aborts, and aborts a timeout signal at its time', async () => {
    const time = new VirtualClock(START);
    const controller = new AbortController();
    const slept = time.sleep(1000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(slept).rejects.toThrow('stopped');
    const timeout = time.timeout(300);
    await time.run(START + 299);
    expect(timeout.aborted).toBe(false);
    await time.run(START + 300);
    expect(timeout.aborted).toBe(true);
    expect((timeout.reason as DOMException).name).toBe('TimeoutError');
  });
});

describe('SimProcess', () => {
  it('reads true time plus its skew, and sleepUntil waits on that clock', async () => {
    const time = new VirtualClock(START);
    const process = new SimProcess('worker-1.1', 'worker', time, 1500);
    expect(process.now()).toBe(START + 1500);
    let at = 0;
    void sleepUntil(process, START + 4000).then(() => (at = time.now()));
    await time.run(START + 10_000);
    expect(at).toBe(START + 2500);
  });

  it('runs nothing while paused (its timers fire at its resume) and nothing once killed', async () => {
    const time = new VirtualClock(START);
    const paused = new SimProcess('worker-1.1', 'worker', time, 0);
    const killed = new SimProcess('worker-2.1', 'worker', time, 0);
    const woke: Record<string, number> = {};
    void paused.sleep(1000).then(() => (woke.paused = time.now() - START));
    void killed.sleep(1000).then(() => (woke.killed = time.now() - START));
    paused.pause(3000);
    killed.kill();
    await time.run(START + 10_000);
    expect(woke).toEqual({ paused: 3000 });
  });

  it('keeps a stepped clock within ±2 s of true time', () => {
    const process = new SimProcess('worker-1.1', 'worker', new VirtualClock(START), -1500);
    process.step(-1500);
    expect(process.offsetMs).toBe(-2000);
  });
});
