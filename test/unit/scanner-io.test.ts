/**
 * The scanner's I/O rules, with the real Scanner, a manual clock and fakes
 * of its ports: delays computed as each batch is sent, a long outage caught
 * up in one scan, `missed` reported only by the scanner whose advance won,
 * and a busy store that stops one job, not the shard.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { StoreBusyError } from '../../lib/core/errors.ts';
import { RecordingEventSink } from '../../lib/core/events.ts';
import type { SliceStore, SweepCandidate, WorkMessage } from '../../lib/core/ports.ts';
import { Scanner } from '../../lib/engine/scanner.ts';
import { fakeJob, FakeScheduleStore, noSweeps, recordingQueue } from '../support/fake-schedule-store.ts';

const T0 = Date.parse('2026-12-01T08:00:00Z');

function scannerOver(store: FakeScheduleStore, clock: ManualClock, sent: WorkMessage[], sentAt: number[] = [], slices: SliceStore = noSweeps) {
  const events = new RecordingEventSink();
  const errors: unknown[] = [];
  const scanner = new Scanner({
    scannerId: 's1',
    schedules: store,
    slices,
    queue: recordingQueue(sent, clock, sentAt),
    events,
    clock,
    lookaheadMs: 120_000,
    sweepGraceMs: 30_000,
    onError: (error) => errors.push(error),
  });
  return { scanner, events, errors };
}

describe('Scanner I/O', () => {
  it('a slow 300-job scan sends each batch with the delay left at its own send time, so every slice surfaces within its second', async () => {
    const clock = new ManualClock(T0);
    const due = T0 + 10_000;
    const jobs = Array.from({ length: 300 }, (_, i) => fakeJob({ id: `burst-${i}`, cron: '10 0 8 1 12 *' }, due));
    // Each advance takes 20 ms: the whole scan takes 6 s of the 10 s before the slices are due.
    const store = new FakeScheduleStore(jobs, { clock, advanceMs: 20 });
    const sent: WorkMessage[] = [];
    const sentAt: number[] = [];
    await scannerOver(store, clock, sent, sentAt).scanner.scanShard(0);
    expect(sent).toHaveLength(300);
    expect(clock.now() - T0).toBeGreaterThanOrEqual(300 * 20 / 8);
    const surfacesLate = sent.map((message, i) => (sentAt[i] as number) + message.delaySeconds * 1000 - message.scheduledAt);
    // Delays are whole seconds, rounded down: a message surfaces at most 1 s before its slice, never after it.
    expect(Math.max(...surfacesLate)).toBeLessThanOrEqual(0);
    expect(Math.min(...surfacesLate)).toBeGreaterThan(-1000);
  });

  it('a per-second job after a 10-minute outage is caught up in one scan, not 99 slices a scan', async () => {
    const clock = new ManualClock(T0);
    const store = new FakeScheduleStore([fakeJob({ cron: '* * * * * *' }, T0 - 600_000)]);
    const sent: WorkMessage[] = [];
    const { scanner, events } = scannerOver(store, clock, sent);
    await scanner.scanShard(0);
    // The default catch-up window is 10 minutes: every occurrence from then to the end of the lookahead.
    expect(store.created).toHaveLength(600 + 120);
    expect(new Set(store.created).size).toBe(720);
    expect(store.job.nextFireAt).toBe(T0 + 120_000);
    expect(sent).toHaveLength(720);
    expect(events.ofType('missed')).toEqual([]);
  });

  it('reports occurrences older than the catch-up window missed only when its own advance won', async () => {
    const clock = new ManualClock(T0);
    const outage = fakeJob({ cron: '0 * * * * *' }, T0 - 3_600_000);
    const lost = new FakeScheduleStore([outage]);
    lost.answer = async () => ({ kind: 'conflict', alreadyCreated: [] });
    const loser = scannerOver(lost, clock, []);
    await loser.scanner.scanShard(0);
    expect(loser.events.ofType('missed')).toEqual([]);

    const won = new FakeScheduleStore([outage]);
    const winner = scannerOver(won, clock, []);
    await winner.scanner.scanShard(0);
    expect(winner.events.ofType('missed').map((event) => event.count)).toEqual([50]);
  });

  it('a conflict whose slices this scan itself created (its reply was lost) sends them; any other conflict sends nothing', async () => {
    const clock = new ManualClock(T0);
    const job = fakeJob({ id: 'unanswered', cron: '0 * * * * *' }, T0 + 5000);
    const store = new FakeScheduleStore([job]);
    store.answer = async () => ({ kind: 'conflict', alreadyCreated: [{ jobId: job.id, scheduledAt: T0 + 5000 }] });
    const sent: WorkMessage[] = [];
    const { scanner } = scannerOver(store, clock, sent);
    expect(await scanner.scanShard(0)).toMatchObject({ conflicts: 1 });
    expect(sent.map((message) => [message.jobId, message.scheduledAt])).toEqual([[job.id, T0 + 5000]]);

    const other = new FakeScheduleStore([job]);
    other.answer = async () => ({ kind: 'conflict', alreadyCreated: [] });
    const none: WorkMessage[] = [];
    await scannerOver(other, clock, none).scanner.scanShard(0);
    expect(none).toEqual([]);
  });

  it('an advance whose every try timed out may have landed: the scan re-sends what its own id created for that job, and only that', async () => {
    const clock = new ManualClock(T0);
    const store = new FakeScheduleStore([fakeJob({ id: 'timed-out', cron: '0 * * * * *' }, T0 + 5000), fakeJob({ id: 'fine', cron: '0 * * * * *' }, T0 + 5000)]);
    // The first try landed while the client waited: the slice is there, the job advanced, and the scanner saw only a timeout.
    store.answer = (job) => (job.id === 'timed-out' ? Promise.reject(Object.assign(new Error('a request has exceeded the configured 3000 ms requestTimeout'), { name: 'TimeoutError' })) : undefined);
    const createdByScan: { scanId: string; from: number; to: number }[] = [];
    const slices = {
      ...noSweeps,
      findCreatedByScan: async (_shard: number, scanId: string, from: number, to: number): Promise<SweepCandidate[]> => {
        createdByScan.push({ scanId, from, to });
        return [
          { jobId: 'timed-out', scheduledAt: T0 + 5000, sweepAt: T0 + 35_000 },
          { jobId: 'fine', scheduledAt: T0 + 5000, sweepAt: T0 + 35_000 },
        ] as SweepCandidate[];
      },
    } as SliceStore;
    const sent: WorkMessage[] = [];
    const { scanner } = scannerOver(store, clock, sent, [], slices);
    const report = await scanner.scanShard(0, { scanId: 'scan-1' });
    expect(report).toMatchObject({ errors: 1, incomplete: true, jobsAdvanced: 1, resent: 1 });
    expect(createdByScan.map((query) => query.scanId)).toEqual(['scan-1']);
    // 'fine' was sent once, by its own advance; 'timed-out' once, by the re-send.
    expect(sent.map((message) => message.jobId).sort()).toEqual(['fine', 'timed-out']);
  });

  it('a busy store stops the one job and flags the scan incomplete; the other jobs advance', async () => {
    const clock = new ManualClock(T0);
    const store = new FakeScheduleStore([fakeJob({ id: 'throttled', cron: '0 * * * * *' }, T0 + 5000), fakeJob({ id: 'fine', cron: '0 * * * * *' }, T0 + 5000)]);
    store.answer = (job) => (job.id === 'throttled' ? Promise.reject(new StoreBusyError('advance', 'ThrottlingError')) : undefined);
    const sent: WorkMessage[] = [];
    let lookedUp = 0;
    const slices = { ...noSweeps, findCreatedByScan: async () => (lookedUp++, []) } as unknown as SliceStore;
    const { scanner, errors } = scannerOver(store, clock, sent, [], slices);
    const report = await scanner.scanShard(0, { scanId: 'scan-1' });
    expect(report).toMatchObject({ errors: 1, incomplete: true, jobsAdvanced: 1 });
    expect(errors[0]).toBeInstanceOf(StoreBusyError);
    expect(sent.map((message) => message.jobId)).toEqual(['fine']);
    expect(store.jobs.get('throttled')?.nextFireAt).toBe(T0 + 5000);
    // A refusal wrote nothing: nothing to look for, nothing re-sent.
    expect(lookedUp).toBe(0);
    expect(report.resent).toBe(0);
  });
});
