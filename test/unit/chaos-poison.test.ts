/**
 * The drill's `poison` fault: its seeded plan, the injector's choice of
 * victims and its repair (over fakes of the raw write and the repository),
 * the expected occurrences around a poisoning, and the checks.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, parseFaultList } from '../../tools/chaos/config.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { JobRecord } from '../../lib/core/job-record.ts';
import { expectedOccurrences } from '../../tools/chaos/expected.ts';
import { JobHistoryBook } from '../../tools/chaos/job-history.ts';
import { checkPoison, poisonViolations, REACH_BACK_MS, SCAN_SLACK_MS } from '../../tools/chaos/poison-checks.ts';
import { BAD_VALUES, MIN_POISONED_MS, planPoison, PoisonInjector, type Poisoning } from '../../tools/chaos/poison-faults.ts';
import type { SetAsideJob } from '../../lib/core/set-aside.ts';
import { storedJobRecord } from '../support/job-records.ts';

const T0 = Date.parse('2026-12-06T05:00:00Z');

describe('the poison plan', () => {
  it('is the same for the same seed, lands inside the window, and leaves each job poisoned 30 s or more, repaired 12 s before the end', () => {
    for (const seed of [1, 7, 4242, 99_001]) {
      for (const durationMs of [60_000, 300_000]) {
        const plan = planPoison({ seed, durationMs });
        expect(planPoison({ seed, durationMs })).toEqual(plan);
        expect(plan.length).toBe(durationMs === 60_000 ? 2 : 5);
        for (const p of plan) {
          expect(p.atMs).toBeGreaterThanOrEqual(8000);
          expect(p.repairAtMs - p.atMs).toBeGreaterThanOrEqual(MIN_POISONED_MS);
          expect(p.repairAtMs).toBeLessThanOrEqual(durationMs - 12_000);
          expect(p.choice).toBeGreaterThanOrEqual(0);
          expect(p.choice).toBeLessThan(1);
        }
        expect(plan.map((p) => p.atMs)).toEqual([...plan.map((p) => p.atMs)].sort((a, b) => a - b));
      }
    }
    expect(planPoison({ seed: 1, durationMs: 60_000 })).not.toEqual(planPoison({ seed: 2, durationMs: 60_000 }));
  });

  it('plans nothing when the window cannot hold a poisoned spell and its repair', () => {
    expect(planPoison({ seed: 1, durationMs: 45_000 })).toEqual([]);
  });

  it('is part of --faults all', () => {
    expect(FAULT_KINDS).toContain('poison');
    expect(parseFaultList('all')).toContain('poison');
    expect(parseFaultList('kill,poison')).toEqual(['kill', 'poison']);
  });
});

describe('the poison injector', () => {
  function setUp() {
    const rows = new Map<string, JobRecord>([
      ['fast-a', storedJobRecord('fast-a', '*/5 * * * * *', 1, T0)],
      ['slow-b', storedJobRecord('slow-b', '17 * * * * *', 1, T0)],
      ['fast-c', storedJobRecord('fast-c', '*/10 * * * * *', 1, T0)],
      ['fast-d', storedJobRecord('fast-d', '*/7 * * * * *', 1, T0, { enabled: false })],
    ]);
    const book = new JobHistoryBook();
    for (const row of rows.values()) book.record('create', row);
    let now = T0 + 10_000;
    const puts: unknown[] = [];
    const writes: string[] = [];
    const injector = new PoisonInjector(
      {
        writeBadRow: async (jobId, generation, bad) => {
          const row = rows.get(jobId) as unknown as Record<string, unknown>;
          if (row.generation !== generation) throw new Error('condition failed');
          writes.push(`${jobId}:${bad.attribute}`);
          rows.set(jobId, { ...row, [bad.attribute]: bad.value } as unknown as JobRecord);
        },
        repository: {
          put: async (input) => {
            puts.push(input);
            const spec = input as { id: string; schedule: string };
            const row = rows.get(spec.id) as JobRecord;
            rows.set(spec.id, storedJobRecord(spec.id, spec.schedule, row.generation + 1, now));
          },
        },
        readRecord: async (jobId) => rows.get(jobId),
        specOf: (jobId) => ({
          id: jobId,
          schedule: book.histories().find((h) => h.jobId === jobId)?.changes[0]?.definition?.schedule ?? '',
          handler: 'chaos-fast',
        }),
        book,
        now: () => now,
      },
      [...rows.keys()],
    );
    return { rows, book, puts, writes, injector, advance: (ms: number) => (now += ms) };
  }

  it('poisons only enabled every-few-seconds jobs not poisoned already, and records the poisoning in the history', async () => {
    const { book, writes, injector } = setUp();
    expect(await injector.poison('schedule', 0)).toBe('fast-a');
    expect(await injector.poison('timeZone', 0)).toBe('fast-c');
    // Left: slow-b (not every few seconds), fast-d (disabled), the two poisoned.
    expect(await injector.poison('enabled', 0.5)).toBeUndefined();
    expect(writes).toEqual(['fast-a:schedule', 'fast-c:timeZone']);
    expect(injector.isPoisoned('fast-a')).toBe(true);
    expect(book.current('fast-a')).toEqual({ kind: 'poison', generation: 1, at: T0 + 10_000 });
    expect(injector.poisonings().map((p) => [p.jobId, p.kind, p.generation])).toEqual([
      ['fast-a', 'schedule', 1],
      ['fast-c', 'timeZone', 1],
    ]);
  });

  it('repairs with a put of the good definition: a new generation, recorded as the repair, the job poisonable again', async () => {
    const { book, puts, rows, injector, advance } = setUp();
    await injector.poison('schedule', 0);
    expect((rows.get('fast-a') as unknown as Record<string, unknown>).schedule).toBe(BAD_VALUES.schedule.value);
    advance(30_000);
    expect(await injector.repair('fast-a')).toBe(true);
    expect(puts).toEqual([{ id: 'fast-a', schedule: '*/5 * * * * *', handler: 'chaos-fast', enabled: true }]);
    expect(book.current('fast-a')).toMatchObject({
      kind: 'repair',
      generation: 2,
      at: T0 + 40_000,
      definition: { schedule: '*/5 * * * * *', enabled: true },
    });
    expect(injector.isPoisoned('fast-a')).toBe(false);
    expect(injector.poisonings()).toEqual([
      expect.objectContaining({ jobId: 'fast-a', generation: 1, at: T0 + 10_000, repairedAt: T0 + 40_000, repairedGeneration: 2 }),
    ]);
    expect(await injector.repair('fast-a')).toBe(false);
  });

  it('records nothing when the bad row did not land (the job changed generation under it)', async () => {
    const { rows, injector, book } = setUp();
    rows.set('fast-a', storedJobRecord('fast-a', '*/5 * * * * *', 2, T0 + 5000));
    expect(await injector.poison('schedule', 0)).toBeUndefined();
    expect(book.current('fast-a')?.kind).toBe('create');
  });
});

describe('expected occurrences around a poisoning', () => {
  it('expects none from the poisoning to the repair, and every one from the repair on', () => {
    const book = new JobHistoryBook();
    book.record('create', storedJobRecord('job', '*/10 * * * * *', 1, T0));
    expect(book.poisoned('job', T0 + 25_000)).toBe(true);
    book.record('repair', storedJobRecord('job', '*/10 * * * * *', 2, T0 + 61_000));
    const at = expectedOccurrences(book.histories(), T0, T0 + 100_000).map((o) => (o.scheduledAt - T0) / 1000);
    expect(at).toEqual([0, 10, 20, 70, 80, 90]);
  });

  it('records no poisoning of a job that has no live definition', () => {
    const book = new JobHistoryBook();
    expect(book.poisoned('nosuch', T0)).toBe(false);
    book.record('create', storedJobRecord('job', '*/10 * * * * *', 1, T0));
    book.poisoned('job', T0 + 1000);
    expect(book.poisoned('job', T0 + 2000)).toBe(false);
  });
});

describe('the poison checks', () => {
  const poisoning: Poisoning = {
    jobId: 'p',
    kind: 'schedule',
    generation: 3,
    at: T0 + 20_000,
    repairedAt: T0 + 60_000,
    repairedGeneration: 4,
  };
  const aside = (generation: number): SetAsideJob => ({
    jobId: 'p',
    generation,
    reason: 'bad cron',
    from: T0 + 40_000,
    at: T0 + 25_000,
    by: 'scanner-1.1',
  });
  const miss = (jobId: string, offsetMs: number) => ({
    executionKey: executionKey(jobId, T0 + offsetMs),
    jobId,
    scheduledAt: T0 + offsetMs,
  });

  it('counts a poisoned job set aside by the record of its poisoned generation, or by a set_aside event while poisoned', () => {
    const byRecord = checkPoison({ poisonings: [poisoning], setAside: [aside(3)], setAsideEvents: [], missed: [] });
    expect(byRecord).toMatchObject({ poisonedJobs: 1, poisonedSetAside: 1, repaired: 1, neverSetAside: [] });
    const byEvent = checkPoison({ poisonings: [poisoning], setAside: [], setAsideEvents: [{ jobId: 'p', at: T0 + 30_000 }], missed: [] });
    expect(byEvent.poisonedSetAside).toBe(1);
    expect(poisonViolations(byEvent)).toEqual([]);
  });

  it('fails a poisoned job never set aside: no record of its generation, no event while it was poisoned', () => {
    const verdict = checkPoison({
      poisonings: [poisoning],
      setAside: [aside(2)],
      setAsideEvents: [
        { jobId: 'p', at: T0 + 20_000 - SCAN_SLACK_MS - 1 },
        { jobId: 'p', at: T0 + 60_000 },
        { jobId: 'other', at: T0 + 30_000 },
      ],
      missed: [],
    });
    expect(verdict.poisonedSetAside).toBe(0);
    expect(verdict.neverSetAside).toEqual(['p']);
    expect(poisonViolations(verdict)).toEqual(['poisoned jobs never set aside: p']);
  });

  it('counts an event of a scan that started before the poisoning it read, but not one from before the previous repair', () => {
    const started = checkPoison({ poisonings: [poisoning], setAside: [], setAsideEvents: [{ jobId: 'p', at: T0 + 19_000 }], missed: [] });
    expect(started.neverSetAside).toEqual([]);
    const second: Poisoning = { ...poisoning, generation: 4, at: T0 + 65_000, repairedAt: T0 + 110_000, repairedGeneration: 5 };
    const beforeRepair = checkPoison({
      poisonings: [poisoning, second],
      setAside: [],
      setAsideEvents: [{ jobId: 'p', at: T0 + 30_000 }],
      missed: [],
    });
    expect(beforeRepair.neverSetAside).toEqual(['p']);
  });

  it('fails a repaired generation set aside again, and a repair that never landed', () => {
    const again = checkPoison({
      poisonings: [poisoning],
      setAside: [aside(4)],
      setAsideEvents: [{ jobId: 'p', at: T0 + 30_000 }],
      missed: [],
    });
    expect(poisonViolations(again)).toEqual(['repaired jobs set aside again: p']);
    const unrepaired = checkPoison({
      poisonings: [{ ...poisoning, repairedAt: undefined, repairedGeneration: undefined }],
      setAside: [aside(3)],
      setAsideEvents: [],
      missed: [],
    });
    expect(poisonViolations(unrepaired)).toEqual(['poisoned jobs whose repair never landed: p']);
  });

  it('passes a job poisoned again after its repair, set aside in its second poisoned generation', () => {
    const second: Poisoning = { ...poisoning, generation: 4, at: T0 + 70_000, repairedAt: T0 + 110_000, repairedGeneration: 5 };
    const verdict = checkPoison({
      poisonings: [poisoning, second],
      setAside: [aside(4)],
      setAsideEvents: [{ jobId: 'p', at: T0 + 30_000 }],
      missed: [],
    });
    expect(verdict.setAsideAfterRepair).toEqual([]);
    expect(poisonViolations(verdict)).toEqual([]);
  });

  it("excuses only the poisoned job's occurrences that met its bad row; every other miss stays missed", () => {
    const missed = [
      miss('p', 20_000 - REACH_BACK_MS - 1000), // long before the poisoning: the engine's fault
      miss('p', 15_000), // pending when the row went bad
      miss('p', 70_000), // after the repair: expected again
      miss('other', 30_000), // another job, while p was poisoned
    ];
    const verdict = checkPoison({ poisonings: [poisoning], setAside: [aside(3)], setAsideEvents: [], missed });
    expect(verdict.excused).toEqual([missed[1]?.executionKey]);
    expect(verdict.missed).toEqual([missed[0]?.executionKey, missed[2]?.executionKey, missed[3]?.executionKey]);
  });
});
