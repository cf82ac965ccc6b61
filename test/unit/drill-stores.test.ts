/**
 * The drill's reads after its window share the emulator with the outbox dispatcher still draining wires; one read
 * that timed out (its SDK tries spent) must be sent again, not end a 300 s drill in its checking phase (seen:
 * `npm run chaos -- --settlement --duration 300`, an uncaught TimeoutError while 6,000 wires drained).
 */
import { describe, expect, it } from 'vitest';
import { readEffects, readSlices } from '../../tools/chaos/drill-stores.ts';
import type { Slice } from '../../lib/core/slice.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';

function timeout(): Error {
  return Object.assign(new Error('Request timed out'), { name: 'TimeoutError', $metadata: { attempts: 1 } });
}

/** A runtime whose first `failures` store requests time out; only the two members these reads use. */
function flakyRuntime(failures: number): { runtime: Runtime; calls: () => number } {
  let calls = 0;
  const fail = (): void => {
    calls++;
    if (calls <= failures) throw timeout();
  };
  const slice = { jobId: 'job-a', scheduledAt: 60_000, status: 'SUCCEEDED' } as Slice;
  const runtime = {
    jobs: () => ({
      slicesOf: async () => {
        fail();
        return [slice];
      },
    }),
    clients: {
      dynamo: {
        send: async () => {
          fail();
          return { Items: [{ executionKey: { S: 'job-a:1970-01-01T00:01:00Z' }, fence: { N: '1' }, worker: { S: 'w1' } }] };
        },
      },
    },
  } as unknown as Runtime;
  return { runtime, calls: () => calls };
}

describe('the drill reads its stores patiently', () => {
  it('reads a job history again after a timed-out query', async () => {
    const { runtime, calls } = flakyRuntime(2);
    const slices = await readSlices(runtime, ['job-a'], 120_000);
    expect(slices.map((s) => s.scheduledAt)).toEqual([60_000]);
    expect(calls()).toBe(3);
  });

  it('reads the effects table again after a timed-out scan', async () => {
    const { runtime, calls } = flakyRuntime(1);
    const effects = await readEffects(runtime, 'drill');
    expect(effects).toEqual([{ executionKey: 'job-a:1970-01-01T00:01:00Z', fence: 1, worker: 'w1' }]);
    expect(calls()).toBe(2);
  });

  it('gives up after five tries, with the store error', async () => {
    const { runtime, calls } = flakyRuntime(10);
    await expect(readSlices(runtime, ['job-a'], 120_000)).rejects.toThrow('Request timed out');
    expect(calls()).toBe(5);
  });
});
