/**
 * One bad job harms no other: the real Scanner and Worker over the in-memory
 * stores with the manual clock, with bad rows put straight into the jobs
 * table beside good jobs (a schedule and a zone that no longer parse, a row
 * missing its policies or with a field of the wrong type), both before the scan
 * takes a job up from the inbox and after its entry is on the wheel. Every
 * good occurrence is sent and runs, the cursor moves, and each bad job is set
 * aside with its reason on the wheel, an event and the scan's report.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { isTombstone, type StoredJob } from '../../lib/core/job-record.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { isSetAsideNow } from '../../lib/core/set-aside.ts';
import { scanHorizon } from '../../lib/core/wheel.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createMemoryEngine, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const LOOKAHEAD_MS = 30_000;
const GOOD = [
  { id: 'good-10s', schedule: '*/10 * * * * *' },
  { id: 'good-3s', schedule: '*/3 * * * * *' },
];
/** How each bad row differs from the good one it was put as. */
const BAD: Record<string, (job: StoredJob) => StoredJob> = {
  'bad-cron': (job) => ({ ...job, schedule: 'every tuesday-ish' }),
  'bad-zone': (job) => ({ ...job, timeZone: 'Mars/Olympus_Mons' }),
  'bad-policies': (job) => ({ ...job, policies: undefined as unknown as StoredJob['policies'] }),
  'bad-enabled': (job) => ({ ...job, enabled: 'yes' as unknown as boolean }),
};

function corrupt(engine: MemoryEngine, id: string): void {
  const record = engine.tables.jobs.get(id);
  if (record === undefined || isTombstone(record)) throw new Error(`no job ${id}`);
  engine.tables.jobs.set(id, (BAD[id] as (job: StoredJob) => StoredJob)(record));
}

async function runFor(engine: MemoryEngine, clock: ManualClock, seconds: number): Promise<ScanReport[]> {
  const scanner = engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS });
  const worker = engine.worker('worker');
  const reports: ScanReport[] = [];
  for (let second = 0; second <= seconds; second += 5) {
    clock.set(T0 + second * 1000);
    reports.push(await scanner.scanShard(0));
    await engine.drain(worker);
  }
  return reports;
}

describe('a job whose stored row cannot be planned or sent', () => {
  it.each([
    ['taken up from the inbox', true],
    ['already on the wheel', false],
  ])('is set aside, %s, and every other job of the shard runs every occurrence', async (_, beforeFirstScan) => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    for (const job of GOOD) await engine.register(job, async () => {});
    for (const id of Object.keys(BAD)) await engine.register({ id, schedule: '*/5 * * * * *' }, async () => {});
    if (beforeFirstScan) for (const id of Object.keys(BAD)) corrupt(engine, id);
    else {
      await engine.scanner('first', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
      for (const id of Object.keys(BAD)) corrupt(engine, id);
    }

    const reports = await runFor(engine, clock, 60);
    const end = T0 + 60_000;
    clock.set(scanHorizon(end, LOOKAHEAD_MS) + 1000);
    await engine.drain(engine.worker('worker'));

    expect(reports.reduce((sum, report) => sum + report.errors, 0)).toBe(0);
    expect(reports.every((report) => !report.incomplete)).toBe(true);
    expect((await engine.wheel.readCursor(0))?.scannedThrough).toBe(scanHorizon(end, LOOKAHEAD_MS));
    for (const job of GOOD) {
      const expected = occurrencesBetween({ cron: job.schedule, timeZone: 'UTC' }, T0, scanHorizon(end, LOOKAHEAD_MS), 1000);
      const slices = await engine.jobs().slicesOf(job.id, 0);
      expect(
        slices.map((slice) => slice.scheduledAt),
        job.id,
      ).toEqual(expected);
      expect(
        slices.every((slice) => slice.status === 'SUCCEEDED'),
        job.id,
      ).toBe(true);
    }

    const aside = await engine.wheel.setAsideJobs(0);
    expect(aside.map((record) => record.jobId).sort()).toEqual(Object.keys(BAD).sort());
    for (const record of aside) {
      expect(isSetAsideNow(record, await engine.jobs().get(record.jobId))).toBe(true);
      expect(record.generation).toBe((await engine.jobs().get(record.jobId))?.generation);
    }
    const reasons = Object.fromEntries(aside.map((record) => [record.jobId, record.reason]));
    expect(reasons['bad-cron']).toMatch(/every tuesday-ish/);
    expect(reasons['bad-zone']).toMatch(/Mars\/Olympus_Mons/);
    expect(reasons['bad-policies']).toMatch(/policies/);
    expect(reasons['bad-enabled']).toMatch(/stored enabled "yes" is not a boolean/);
    // One event and one count per bad job: once set aside, no scan meets it again.
    expect(
      engine.events
        .ofType('set_aside')
        .map((event) => event.jobId)
        .sort(),
    ).toEqual(Object.keys(BAD).sort());
    expect(reports.reduce((sum, report) => sum + report.setAside, 0)).toBe(Object.keys(BAD).length);
    // None of the bad jobs ran anything after it was corrupted.
    for (const id of Object.keys(BAD))
      expect(
        engine.events.ofType('started').filter((event) => event.jobId === id && Date.parse(event.scheduledAt) >= T0 + LOOKAHEAD_MS + 5000),
      ).toEqual([]);
  });

  it('a change gives it a new generation, which runs again; the old record is history', async () => {
    const clock = new ManualClock(T0);
    const engine = createMemoryEngine(clock);
    await engine.register({ id: 'bad-cron', schedule: '*/5 * * * * *' }, async () => {});
    corrupt(engine, 'bad-cron');
    await engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    const [record] = await engine.wheel.setAsideJobs(0);
    expect(isSetAsideNow(record, await engine.jobs().get('bad-cron'))).toBe(true);

    clock.set(T0 + 10_000);
    const { job } = await engine.jobs().put({ id: 'bad-cron', schedule: '*/5 * * * * *', handler: 'bad-cron' });
    expect(isSetAsideNow(record, job)).toBe(false);
    await engine.scanner('scanner', { lookaheadMs: LOOKAHEAD_MS }).scanShard(0);
    await engine.drain(engine.worker('worker'));
    expect((await engine.jobs().slicesOf('bad-cron', T0 + 10_000)).map((slice) => slice.status)).toContain('SUCCEEDED');
  });
});
