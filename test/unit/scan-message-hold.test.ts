/**
 * The scanner handler keeps its scan message hidden while a scan runs (the scan queue's 5 s visibility is the scanner
 * failover timer), through a HeldMessage like a work message: every 2 s, and nothing once the receipt may have lapsed,
 * when another scanner may have received the message and a late change would hide its copy.
 */
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { encodeScanMessage } from '../../lib/core/messages.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createScannerHandler } from '../../lib/lambda/handlers.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { VirtualClock } from '../../tools/sim/virtual-clock.ts';

const T0 = Date.parse('2026-12-07T12:00:00Z');

/** The parts of a runtime the scanner handler uses; the scan takes `scanMs` of virtual time. */
function scanRuntime(clock: VirtualClock, scanMs: number, hide: (seconds: number) => Promise<void>) {
  const hides: { atMs: number; seconds: number }[] = [];
  const runtime = {
    clock,
    scanner: () => ({
      scanShard: async (shard: number): Promise<Partial<ScanReport>> => {
        await clock.sleep(scanMs);
        return { shard, sent: 0, swept: 0, reconciled: 0, missed: 0, skipped: 0, errors: 0, incomplete: false };
      },
    }),
    scanQueue: {
      send: async () => {},
      hide: async (_receiptHandle: string, seconds: number) => {
        hides.push({ atMs: clock.now() - T0, seconds });
        await hide(seconds);
      },
    },
    eventSource: { hiddenSince: () => undefined, batchDeletes: () => ({ delete: () => {}, end: async () => {} }) },
    bus: { flush: async () => {} },
  };
  return { runtime: runtime as unknown as Runtime, hides };
}

const record = { body: encodeScanMessage(3), receiptHandle: 'scan-r1', messageId: 'scan-m1', attributes: {} } as unknown as SQSRecord;
const log = { error: () => {}, info: () => {} };

describe('the scanner handler’s scan message', () => {
  it('is hidden again every 2 s for the scan queue’s 5 s while a slow scan runs, and no more once it ends', async () => {
    const clock = new VirtualClock(T0);
    const { runtime, hides } = scanRuntime(clock, 7000, async () => {});
    const handled = createScannerHandler(runtime, 'scanner-1', log)({ Records: [record] });
    await clock.run(T0 + 20_000);
    expect((await handled).batchItemFailures).toEqual([]);
    expect(hides).toEqual([2000, 4000, 6000].map((atMs) => ({ atMs, seconds: 5 })));
  });

  it('is not hidden again once its receipt may have lapsed (a refused change left it to surface): another scanner may hold it', async () => {
    const clock = new VirtualClock(T0);
    const { runtime, hides } = scanRuntime(clock, 9000, () => Promise.reject(new Error('throttled')));
    const handled = createScannerHandler(runtime, 'scanner-1', log)({ Records: [record] });
    await clock.run(T0 + 20_000);
    await handled;
    // Hidden at the receive for 5 s, less the margin: the beats at 2 and 4 s are refused, and at 6 s it may have surfaced.
    expect(hides.map((hide) => hide.atMs)).toEqual([2000, 4000]);
  });
});
