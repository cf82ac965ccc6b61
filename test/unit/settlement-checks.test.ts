/**
 * The settlement drill's checks (tools/chaos/settlement-checks.ts) on
 * hand-made stores and reports: a clean resumed settlement passes; a
 * redone chunk, a merchant paid twice under two keys, a missing payout, a
 * chunk record short and a slow takeover each break it, and say so. And
 * the timeline marks the settlement's chunks.
 */
import { describe, expect, it } from 'vitest';
import type { ObservedChunk } from '../../tools/chaos/observed.ts';
import {
  checkSettlement,
  redoneChunks,
  settlementViolations,
  type SettlementCheckInput,
  type SettlementStoreRecords,
} from '../../tools/chaos/settlement-checks.ts';
import type { Failover } from '../../tools/chaos/takeovers.ts';
import { renderTimelineSvg } from '../../tools/chaos/timeline-svg.ts';
import { lifecycleEvent } from '../../lib/core/events.ts';
import { checkHistory } from '../../tools/chaos/history.ts';

const KEY = 'merchant-settlement-fast:2026-12-01T16:04:30Z';
const MERCHANTS = 6;
const CHUNKS = 3; // two merchants a chunk
const T0 = 1_000_000;
const merchant = (i: number): string => `m${String(i + 1).padStart(4, '0')}`;
const BOUNDS = { merchants: MERCHANTS, chunks: CHUNKS, failoverBoundMs: 5000 };

/** Chunk 0 by worker-1 (fence 1), then worker-1 paused; worker-2 (fence 2) skips 0 and commits 1 and 2; worker-1's late chunk 1 is refused. */
function resumed(): { records: SettlementStoreRecords; reports: ObservedChunk[]; input: SettlementCheckInput } {
  const fenceOf = (chunk: number): number => (chunk === 0 ? 1 : 2);
  const records: SettlementStoreRecords = {
    executionKey: KEY,
    status: 'SUCCEEDED',
    chunkRecords: [0, 1, 2].map((chunk) => ({ chunk, fence: fenceOf(chunk), committedAt: T0 + chunk * 1000 })),
    payouts: Array.from({ length: MERCHANTS }, (_, i) => ({
      merchant: merchant(i),
      chunk: Math.floor(i / 2),
      fence: fenceOf(Math.floor(i / 2)),
    })),
    wires: Array.from({ length: MERCHANTS }, (_, i) => ({ merchant: merchant(i) })),
    outbox: { DELIVERED: MERCHANTS },
  };
  const report = (replica: string, fence: number, chunk: number, outcome: ObservedChunk['outcome'], at: number): ObservedChunk => ({
    replica,
    executionKey: KEY,
    fence,
    chunk,
    outcome,
    at,
  });
  const reports = [
    report('worker-1.1', 1, 0, 'committed', T0),
    report('worker-2.1', 2, 0, 'already-committed', T0 + 4000),
    report('worker-2.1', 2, 1, 'committed', T0 + 4500),
    report('worker-1.1', 1, 1, 'refused', T0 + 6500),
    report('worker-2.1', 2, 2, 'committed', T0 + 5000),
  ];
  const failover: Failover = {
    executionKey: KEY,
    victim: 'worker-1.1',
    standby: 'worker-2.1',
    fault: 'pause',
    lastHeartbeatAt: T0 + 200,
    takeoverAt: T0 + 3400,
    latencyMs: 3200,
  };
  const input: SettlementCheckInput = {
    merchants: MERCHANTS,
    chunks: CHUNKS,
    occurrences: [records],
    reports,
    failovers: [failover, { ...failover, executionKey: 'chaos-0001:2026-12-01T16:04:30Z', latencyMs: 9000 }],
    processFaults: [{ kind: 'pause', replica: 'worker-1.1', at: T0 + 500, until: T0 + 6500 }],
  };
  return { records, reports, input };
}

describe('settlement checks', () => {
  it('passes a settlement a standby resumed at its checkpoint, and counts what it skipped and what the fence refused', () => {
    const verdict = checkSettlement(resumed().input);
    expect(verdict.occurrences).toHaveLength(1);
    expect(verdict.occurrences[0]).toMatchObject({
      status: 'SUCCEEDED',
      payoutRows: MERCHANTS,
      duplicatePayouts: 0,
      missingPayouts: 0,
      acceptedWires: MERCHANTS,
      duplicateWires: 0,
      missingWires: 0,
      chunksCommitted: CHUNKS,
      committedChunksRedone: 0,
      chunksSkippedByStandby: 1,
      zombieChunksRefused: 1,
      faultsMidBatch: 1,
      takeovers: 1,
    });
    // Only the settlement's own takeovers; from the pause itself it took 2.9 s.
    expect(verdict.failover).toMatchObject({ count: 1, max: 3200 });
    expect(verdict.failoverFromFault.max).toBe(2900);
    expect(settlementViolations(verdict, BOUNDS)).toEqual([]);
  });

  it('finds a committed chunk redone by the standby: reported committed under its fence, and its rows rewritten', () => {
    const { records, reports } = resumed();
    const redoneByReport = [...reports, { ...reports[0]!, replica: 'worker-2.1', fence: 2, at: T0 + 4100 }];
    expect([...redoneChunks(records, redoneByReport)]).toEqual([0]);
    const rewritten: SettlementStoreRecords = {
      ...records,
      payouts: records.payouts.map((payout) => (payout.chunk === 0 ? { ...payout, fence: 2 } : payout)),
    };
    expect([...redoneChunks(rewritten, reports)]).toEqual([0]);
    const verdict = checkSettlement({ ...resumed().input, occurrences: [rewritten] });
    expect(verdict.totals.committedChunksRedone).toBe(1);
    expect(settlementViolations(verdict, BOUNDS)).toEqual([`settlement ${KEY}: 1 committed chunks redone after a takeover`]);
  });

  it('counts wires by the merchant they pay: two idempotency keys for one merchant are two payments', () => {
    const { input, records } = resumed();
    const twice: SettlementStoreRecords = { ...records, wires: [...records.wires, { merchant: merchant(3) }] };
    const verdict = checkSettlement({ ...input, occurrences: [twice] });
    expect(verdict.occurrences[0]).toMatchObject({ acceptedWires: MERCHANTS + 1, duplicateWires: 1, missingWires: 0 });
    expect(settlementViolations(verdict, BOUNDS)).toEqual([
      `settlement ${KEY}: 7 wires accepted (1 merchants paid twice, 0 unpaid), not 6`,
    ]);
  });

  it('reports a missing payout, an undelivered wire, a short chunk ledger and an unfinished slice', () => {
    const { input, records } = resumed();
    const short: SettlementStoreRecords = {
      ...records,
      status: 'RUNNING',
      chunkRecords: records.chunkRecords.slice(0, 2),
      payouts: records.payouts.slice(0, 4),
      wires: records.wires.slice(0, 5),
      outbox: { DELIVERED: 5, DEAD: 1 },
    };
    const verdict = checkSettlement({ ...input, occurrences: [short] });
    expect(verdict.occurrences[0]).toMatchObject({
      payoutRows: 4,
      missingPayouts: 2,
      acceptedWires: 5,
      missingWires: 1,
      chunksCommitted: 2,
    });
    expect(settlementViolations(verdict, BOUNDS)).toEqual([
      `settlement ${KEY} ended RUNNING`,
      `settlement ${KEY}: 4 payout rows (0 merchants twice, 2 missing), not 6`,
      `settlement ${KEY}: 5 wires accepted (0 merchants paid twice, 1 unpaid), not 6`,
      `settlement ${KEY}: 2 chunk records, not 3`,
    ]);
  });

  it('bounds the settlement takeovers unhindered by an AWS fault, and needs an occurrence at all', () => {
    const { input } = resumed();
    const slow = checkSettlement({ ...input, failovers: input.failovers.map((f) => ({ ...f, latencyMs: 5200 })) });
    expect(settlementViolations(slow, BOUNDS)).toEqual(['settlement failover max 5200 ms is not under 5000 ms']);
    const throttled = checkSettlement({
      ...input,
      failovers: input.failovers.map((f) => ({ ...f, latencyMs: 7000, slowedBy: 'throttle' as const })),
    });
    expect(settlementViolations(throttled, BOUNDS)).toEqual([]);
    expect(settlementViolations(checkSettlement({ ...input, occurrences: [] }), BOUNDS)).toEqual([
      'settlement: no occurrence in the window (run the drill for at least 60 s)',
    ]);
  });
});

describe('the settlement on the timeline', () => {
  it('draws a tick per chunk report on its worker’s lane, refused ones in red, and outlines the settlement’s attempts', () => {
    const { reports } = resumed();
    const scheduledAt = Date.parse('2026-12-01T16:04:30Z');
    const claimed = lifecycleEvent('claimed', { jobId: 'merchant-settlement-fast', scheduledAt }, T0 - 100, {
      fence: 1,
      worker: 'worker-1.1',
    });
    const fenced = lifecycleEvent('fenced_out', { jobId: 'merchant-settlement-fast', scheduledAt }, T0 + 6600, {
      fence: 1,
      worker: 'worker-1.1',
    });
    const events = [claimed, fenced].map((event) => ({ replica: 'worker-1.1', offsetMs: 0, event }));
    const other = {
      replica: 'worker-2.1',
      offsetMs: 0,
      event: lifecycleEvent('claimed', { jobId: 'merchant-settlement-fast', scheduledAt }, T0 + 3400, { fence: 2, worker: 'worker-2.1' }),
    };
    const verdict = checkHistory({
      events: [...events, other],
      renewals: [],
      processFaults: [],
      slices: [],
      ledger: [],
      effects: [],
      expected: [],
    });
    const svg = renderTimelineSvg({
      events: [...events, other],
      processFaults: [],
      chunks: reports,
      verdict,
      startedAt: T0 - 1000,
      endedAt: T0 + 10_000,
      title: 'settlement',
    });
    expect(svg.match(/<line [^>]*stroke="#6a3d9a"[^>]*><title>[^<]*committed<\/title>/g)).toHaveLength(3);
    expect(svg.match(/<title>[^<]*chunk 0 fence 2 already-committed<\/title>/g)).toHaveLength(1);
    expect(svg).toMatch(/stroke="#d62728" stroke-width="2"><title>[^<]*chunk 1 fence 1 refused<\/title>/);
    expect(svg).toMatch(
      /fill="#d62728" stroke="#6a3d9a" stroke-width="2"><title>merchant-settlement-fast:2026-12-01T16:04:30Z fence 1 fenced_out/,
    );
    expect(renderTimelineSvg({ events, processFaults: [], verdict, startedAt: T0, endedAt: T0 + 1000, title: 'plain' })).not.toContain(
      '#6a3d9a',
    );
  });
});
