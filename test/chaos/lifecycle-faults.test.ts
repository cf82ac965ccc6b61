/**
 * The drill's lifecycle fault against a real JobRepository on the emulator:
 * every kind of change it makes lands, and the history it records carries
 * the instant each took effect (the stored updatedAt, the tombstone's for a
 * delete) and the definition then live, which is what the checker's
 * expectations follow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJobRecord } from '../../tools/chaos/drill-stores.ts';
import { JobHistoryBook, type JobChangeKind } from '../../tools/chaos/job-history.ts';
import { chooseChange, LifecycleInjector } from '../../tools/chaos/lifecycle-faults.ts';
import { SeededRandom } from '../../tools/chaos/random.ts';
import { isTombstone } from '../../lib/core/job-record.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation();
});

afterAll(() => installation.destroy());

describe('lifecycle fault', () => {
  it('picks what the job’s state allows', () => {
    expect(chooseChange('deleted', 0.3)).toBe('readd');
    expect(['pause', 'schedule', 'payload', 'disable', 'delete']).toContain(chooseChange('enabled', 0.99));
    expect(['resume', 'enable', 'delete']).toContain(chooseChange('disabled', 0));
  });

  it('makes each change through the repository and records when it took effect and what became live', async () => {
    const { runtime } = installation;
    const spec = { id: 'lc-job', schedule: '*/5 * * * * *', timeZone: 'UTC', handler: 'chaos-fast', payload: { rev: 0 } };
    const book = new JobHistoryBook();
    book.record('create', (await runtime.jobs().put(spec)).job);
    const injector = new LifecycleInjector(
      { repository: runtime.jobs(), readRecord: (jobId) => readJobRecord(runtime, jobId), book, random: new SeededRandom(1) },
      [spec],
    );
    // choice → kind, by state: enabled [pause, schedule, payload, disable, delete], disabled [resume, enable, delete].
    const steps: [number, JobChangeKind][] = [
      [0, 'pause'],
      [0, 'resume'],
      [0.3, 'schedule'],
      [0.5, 'payload'],
      [0.7, 'disable'],
      [0.5, 'enable'],
      [0.9, 'delete'],
      [0, 'readd'],
    ];
    for (const [choice, kind] of steps) {
      expect(await injector.change(spec.id, choice)).toBe(kind);
      const stored = await readJobRecord(runtime, spec.id);
      const recorded = book.current(spec.id);
      expect(recorded).toMatchObject({ kind, at: stored?.updatedAt, generation: stored?.generation });
      if (stored && !isTombstone(stored)) {
        expect(recorded?.definition).toEqual({
          schedule: stored.schedule,
          timeZone: stored.timeZone,
          dst: stored.dst,
          enabled: stored.enabled,
        });
      } else {
        expect(recorded?.definition).toBeUndefined();
      }
    }
    const [history] = book.histories();
    expect(history?.changes.map((change) => change.generation)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(history?.changes[3]?.definition?.schedule).not.toBe(spec.schedule);
    expect((await runtime.jobs().get(spec.id))?.payload).toMatchObject({ rev: 1 });
  });
});
