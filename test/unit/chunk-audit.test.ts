/** core/chunk-audit.ts: each rule on hand-made records, one finding each. */
import { describe, expect, it } from 'vitest';
import { auditChunks } from '../../lib/core/chunk-audit.ts';
import { newOutboxItem, type ChunkRecord } from '../../lib/core/chunks.ts';
import type { Slice } from '../../lib/core/slice.ts';

const T = Date.parse('2026-09-01T00:30:00Z');
const KEY = 'settle:2026-09-01T00:30:00Z';
const slice = (over: Partial<Slice> = {}): Slice =>
  ({
    jobId: 'settle',
    scheduledAt: T,
    status: 'SUCCEEDED',
    fence: 2,
    attempts: 2,
    handler: 'h',
    shard: 0,
    generation: 1,
    createdAt: T,
    startedAt: T + 10_000,
    finishedAt: T + 20_000,
    ...over,
  }) as Slice;
const chunk = (n: number, fence: number, committedAt: number): ChunkRecord => ({
  executionKey: KEY,
  chunk: n,
  fence,
  owner: `w${fence}`,
  committedAt,
  items: 1,
});
const wire = (n: number, fence: number) => newOutboxItem(KEY, n, fence, T, { key: `m${n}`, url: 'http://bank.invalid', body: '{}' });

describe('auditChunks', () => {
  it('a takeover that resumed cleanly has no finding', () => {
    const report = auditChunks({
      chunks: [chunk(0, 1, T + 1000), chunk(1, 2, T + 11_000)],
      outbox: [{ ...wire(0, 1), status: 'DELIVERED' }],
      slices: [slice()],
      now: T + 60_000,
      graceMs: 120_000,
    });
    expect(report).toEqual({ executions: 1, chunks: 2, outbox: { pending: 0, delivered: 1, dead: 0 }, violations: [] });
  });

  it('flags each broken rule', () => {
    const report = auditChunks({
      chunks: [
        chunk(0, 3, T + 1000),
        chunk(1, 1, T + 15_000),
        chunk(2, 2, T + 25_000),
        { ...chunk(0, 1, T), executionKey: 'other:2026-09-01T00:30:00Z' },
      ],
      outbox: [wire(5, 1), { ...wire(1, 2) }, { ...wire(2, 2), dueAt: T - 200_000 }],
      slices: [slice()],
      now: T + 60_000,
      graceMs: 120_000,
    });
    expect(report.violations.map((violation) => violation.kind)).toEqual([
      'chunk-fence-ahead',
      'chunk-after-takeover',
      'chunk-after-final',
      'chunk-without-slice',
      'outbox-without-chunk',
      'outbox-fence-mismatch',
      'outbox-stuck',
    ]);
  });

  it('a chunk of the old claim within the clock-skew margin of the takeover is not flagged', () => {
    const report = auditChunks({ chunks: [chunk(0, 1, T + 13_000)], outbox: [], slices: [slice()], now: T + 60_000, graceMs: 120_000 });
    expect(report.violations).toEqual([]);
  });
});
