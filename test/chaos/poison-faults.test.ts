/**
 * The drill's poison fault against the emulator: each kind of bad row lands
 * under the job through the raw client (only on the generation the drill
 * recorded), and the repair, a put of the good definition through the real
 * JobRepository, lands over it as a new generation, which is what the
 * checker's expectations follow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJobRecord } from '../../tools/chaos/drill-stores.ts';
import { badRowWriter } from '../../tools/chaos/job-changes.ts';
import { JobHistoryBook } from '../../tools/chaos/job-history.ts';
import { BAD_VALUES, POISON_KINDS, PoisonInjector } from '../../tools/chaos/poison-faults.ts';
import { isTombstone } from '../../lib/core/job-record.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation();
});

afterAll(() => installation.destroy());

describe('poison fault', () => {
  it.each(POISON_KINDS)(
    'writes a bad %s under the job, and a put of its good definition repairs it with a new generation',
    async (kind) => {
      const { runtime } = installation;
      const spec = { id: `poison-${kind}`, schedule: '*/5 * * * * *', timeZone: 'UTC', handler: 'chaos-fast', payload: { rev: 0 } };
      const book = new JobHistoryBook();
      book.record('create', (await runtime.jobs().put(spec)).job);
      const readRecord = (jobId: string) => readJobRecord(runtime, jobId);
      const injector = new PoisonInjector(
        {
          writeBadRow: badRowWriter(runtime),
          repository: runtime.jobs(),
          readRecord,
          specOf: () => spec,
          book,
          now: () => runtime.clock.now(),
        },
        [spec.id],
      );

      expect(await injector.poison(kind, 0)).toBe(spec.id);
      const bad = (await readRecord(spec.id)) as unknown as Record<string, unknown>;
      expect(bad[BAD_VALUES[kind].attribute]).toBe(BAD_VALUES[kind].value);
      expect(bad.generation).toBe(1);
      expect(book.current(spec.id)?.kind).toBe('poison');

      expect(await injector.repair(spec.id)).toBe(true);
      const repaired = await readRecord(spec.id);
      if (!repaired || isTombstone(repaired)) throw new Error('the repair left no job');
      expect(repaired).toMatchObject({ generation: 2, schedule: spec.schedule, timeZone: 'UTC', enabled: true });
      expect(book.current(spec.id)).toMatchObject({
        kind: 'repair',
        generation: 2,
        at: repaired.updatedAt,
        definition: { schedule: spec.schedule, enabled: true },
      });
    },
  );

  it('writes nothing under a job that changed generation since the drill recorded it', async () => {
    const { runtime } = installation;
    const spec = { id: 'poison-moved-on', schedule: '*/5 * * * * *', timeZone: 'UTC', handler: 'chaos-fast' };
    await runtime.jobs().put(spec);
    await runtime.jobs().pause(spec.id);
    await expect(badRowWriter(runtime)(spec.id, 1, BAD_VALUES.schedule)).rejects.toThrow(/condition/i);
    expect(await readJobRecord(runtime, spec.id)).toMatchObject({ schedule: spec.schedule, generation: 2 });
  });
});
