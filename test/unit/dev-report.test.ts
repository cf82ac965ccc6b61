/**
 * `cronfence dev`'s outcome lines: the job column is as wide as the longest
 * registered job id, so a long id (merchant-settlement-fast, 24 characters)
 * does not push its line's columns out from under the header; every column
 * starts under its heading.
 */
import { describe, expect, it } from 'vitest';
import { lifecycleEvent } from '../../lib/core/events.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { DevReport, PENDING_COUNT_LIMIT } from '../../lib/local/dev-report.ts';

const AT = Date.parse('2026-12-02T14:34:30Z');

describe('cronfence dev outcome lines', () => {
  it('line up under the header whatever the length of the job ids', () => {
    const lines: string[] = [];
    const report = new DevReport({ json: false, write: (line) => lines.push(line) });
    const ids = ['every-5-seconds', 'merchant-settlement-fast-with-a-long-name'];
    report.outcomesFollow(ids);
    for (const jobId of ids) {
      const slice = { jobId, scheduledAt: AT };
      report.onEvent(lifecycleEvent('started', slice, AT + 1, { fence: 1, worker: 'worker-1', startLagMs: 1 }));
      report.onEvent(lifecycleEvent('committed', slice, AT + 5, { fence: 1, worker: 'worker-1', durationMs: 4 }));
    }
    const [header, ...rows] = lines;
    expect(rows).toHaveLength(2);
    // Each column's value begins where its heading does, on every line.
    const starts: [string, string][] = [
      ['scheduled', '2026-12-02T14:34:30Z  '],
      ['start lag', 'lag     1 ms  '],
      ['worker', 'worker-1 '],
      ['fence', 'fence  1  '],
      ['outcome', 'committed'],
    ];
    for (const [heading, value] of starts) {
      const at = header?.indexOf(heading) ?? -1;
      expect(at, heading).toBeGreaterThan(0);
      expect(
        rows.map((row) => row.slice(at, at + value.length)),
        heading,
      ).toEqual([value, value]);
    }
  });

  it("prints the dead-man's switch's stale events the dev tick emits", () => {
    const lines: string[] = [];
    const report = new DevReport({ json: false, write: (line) => lines.push(line) });
    report.onEvent(
      lifecycleEvent('stale', { jobId: 'quiet', scheduledAt: AT }, AT + 30_000, {
        fence: 0,
        worker: 'dead-man',
        silentSince: new Date(AT).toISOString(),
        deadline: new Date(AT + 21_000).toISOString(),
        intervalMs: 10_000,
      }),
    );
    expect(lines).toEqual([
      "14:35:00.000  STALE quiet: no final slot since 2026-12-02T14:34:30.000Z, due by 2026-12-02T14:34:51.000Z (dead-man's switch)",
    ]);
  });
});

describe('cronfence dev summary: the outbox', () => {
  const summaryOf = async (pendingByShard: number[], failing = false): Promise<string[]> => {
    const lines: string[] = [];
    const report = new DevReport({ json: false, write: (line) => lines.push(line) });
    const runtime = {
      jobs: () => ({ list: async () => [], ledgerOf: async () => [] }),
      outbox: {
        findDue: async (shard: number, now: number) => {
          if (failing) throw Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' });
          expect(now).toBe(Number.MAX_SAFE_INTEGER);
          return Array.from({ length: pendingByShard[shard] ?? 0 }, () => ({}));
        },
      },
    } as unknown as Runtime;
    await report.summarize(runtime);
    return lines;
  };

  it('says how many outbound requests are still pending, due or not, over every outbox shard', async () => {
    expect(await summaryOf([2, 0, 1, 0])).toContain(
      "outbox: 3 requests still pending, not delivered yet (committed; the next dispatcher delivers them: the next `cronfence dev`, or your stack's outbox function)",
    );
    expect(await summaryOf([0, 0, 0, 0])).toContain('outbox: no requests pending');
    expect(await summaryOf([PENDING_COUNT_LIMIT, 0, 0, 0])).toContain(
      `outbox: at least ${PENDING_COUNT_LIMIT} requests still pending, not delivered yet (committed; the next dispatcher delivers them: the next \`cronfence dev\`, or your stack's outbox function)`,
    );
  });

  it('an outbox it cannot read is said, not thrown', async () => {
    expect(await summaryOf([], true)).toContain('outbox not read: ResourceNotFoundException: Requested resource not found');
  });
});
