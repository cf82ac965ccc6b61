/**
 * A job's timeout is its worker's clock's: the simulator runs the engine in virtual time, so a handler that hangs
 * must time out when that clock says so, not after the timeout's real milliseconds.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryEngine } from '../support/memory-engine.ts';
import { HeldClock } from '../support/held-clock.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const TIMEOUT_MS = 900_000;

describe('a job timeout', () => {
  it('fires when the worker clock fires it: a 15-minute timeout ends a hung handler at once', async () => {
    const clock = new HeldClock(T0);
    const engine = createMemoryEngine(clock);
    const job = await engine.register({ id: 'hangs', policies: { timeoutMs: TIMEOUT_MS } }, () => new Promise<void>(() => {}));
    await engine.enqueue(job, T0);
    const [message] = engine.workQueue.receive();
    const delivered = engine.deliver(engine.worker('w1'), message!);
    await engine.nextEvent((event) => event.type === 'started');
    const timeout = clock.waits.find((wait) => wait.ms === TIMEOUT_MS && wait.signal === undefined);
    expect(timeout).toBeDefined();
    timeout!.release();
    await delivered;
    const failed = await engine.nextEvent((event) => event.type === 'failed' || event.type === 'dead');
    expect(JSON.stringify(failed)).toContain('JobTimeoutError');
  });
});
