/**
 * cronfence/testing from its sources, on the suite's emulator (AWS_ENDPOINT_URL):
 * a slice through a real Worker, a failure, and the two takeovers (at the
 * zombie's commit, and mid-run, where the zombie's ctx.signal fires).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOutError, InvalidJobSpecError, LeaseLostError } from '../../lib/index.ts';
import { startCronfenceTest, type CronfenceTest } from '../../lib/testing/index.ts';
import * as jobs from './fixtures/settle-jobs.ts';

let cron: CronfenceTest;
beforeAll(async () => {
  cron = await startCronfenceTest({ jobs });
});
afterAll(async () => {
  await cron?.stop();
});

describe('runSlice', () => {
  it('runs the next occurrence of a declared job through claim, lease and commit, and returns what it wrote', async () => {
    const run = await cron.runSlice('monthly-settlement');
    expect(run.outcome).toBe('committed');
    expect(run.fence).toBe(1);
    expect(run.handler).toMatchObject({ kind: 'returned' });
    // The next 02:00 IST on a 1st, as a scan would have created it.
    expect(run.scheduledAt.getUTCHours() * 60 + run.scheduledAt.getUTCMinutes()).toBe(20 * 60 + 30);
    expect(run.events.map((event) => event.type)).toEqual(['claimed', 'started', 'committed']);
    expect(run.slice).toMatchObject({ status: 'SUCCEEDED', fence: 1, owner: 'test-worker' });
    expect(run.ledger).toMatchObject({ outcome: 'SUCCEEDED', fence: 1, owner: 'test-worker' });
    expect(process.env.LEDGER_ROWS_TABLE).toBe(cron.tableName('ledger-rows'));
    expect(run.writes).toEqual([
      { put: { tableName: cron.tableName('ledger-rows'), item: { rowId: run.executionKey, fence: 1, amount: 7 } } },
    ]);
    expect((await cron.items('ledger-rows')).filter((row) => row.rowId === run.executionKey)).toEqual([
      { rowId: run.executionKey, fence: 1, amount: 7 },
    ]);
  });

  it('runs a handler by name at a given instant, with a payload, and reports a failed attempt', async () => {
    const ok = await cron.runSlice('settle', { scheduledAt: '2030-05-01T00:00:00Z', payload: { amount: 3 } });
    expect(ok.executionKey).toBe('settle:2030-05-01T00:00:00Z');
    expect(ok.writes).toEqual([
      expect.objectContaining({ put: expect.objectContaining({ item: { rowId: ok.executionKey, fence: 1, amount: 3 } }) }),
    ]);

    const failed = await cron.runSlice('failing', { scheduledAt: '2030-05-01T00:00:00Z' });
    expect(failed.outcome).toBe('failed');
    expect(failed.handler).toMatchObject({ kind: 'threw', error: new Error('the bank is down') });
    expect(failed.slice).toMatchObject({ status: 'FAILED', lastError: 'Error: the bank is down' });
    expect(failed.writes).toEqual([]);
  });

  it('names what it cannot run', async () => {
    await expect(cron.runSlice('nightly')).rejects.toThrow(
      new InvalidJobSpecError(
        'job',
        'nightly',
        "is neither a job in the module's schedules nor a handler it exports (known: monthly-settlement, failing, settle, slow)",
      ),
    );
    await cron.runSlice('settle', { scheduledAt: '2030-06-01T00:00:00Z' });
    await expect(cron.runSlice('settle', { scheduledAt: '2030-06-01T00:00:00Z' })).rejects.toThrow(
      /a slice of settle at this instant exists already/,
    );
  });
});

describe('runSliceWithTakeover', () => {
  it('at the commit: the standby commits (fence 2), the zombie’s commit is refused, both ran the side effect', async () => {
    const run = await cron.runSliceWithTakeover('settle', { scheduledAt: '2030-07-01T00:00:00Z' });
    expect(run.zombie).toMatchObject({ worker: 'test-worker', fence: 1, outcome: 'fenced_out', handler: { kind: 'threw' } });
    expect(run.zombie.handler?.kind === 'threw' && run.zombie.handler.error).toBeInstanceOf(FencedOutError);
    expect(run.takeover).toMatchObject({ worker: 'test-standby', fence: 2, outcome: 'committed', handler: { kind: 'returned' } });
    expect(jobs.sideEffects.filter((effect) => effect.key === run.executionKey).map((effect) => [effect.worker, effect.fence])).toEqual([
      ['test-worker', 1],
      ['test-standby', 2],
    ]);
    expect(run.commits.map((commit) => [commit.worker, commit.fence, commit.result.split(':')[0]])).toEqual([
      ['test-standby', 2, 'landed'],
      ['test-worker', 1, 'FencedOutError'],
    ]);
    expect(run.ledger).toMatchObject({ fence: 2, owner: 'test-standby' });
    expect((await cron.items('ledger-rows')).filter((row) => row.rowId === run.executionKey)).toEqual([
      expect.objectContaining({ fence: 2 }),
    ]);
  });

  it('mid-run: the zombie learns at its next heartbeat (ctx.signal fires, LeaseLostError), its late commit is never sent', async () => {
    const run = await cron.runSliceWithTakeover('slow', { scheduledAt: '2030-08-01T00:00:00Z', at: 300 });
    expect(run.takeover).toMatchObject({ fence: 2 });
    expect(run.zombie).toMatchObject({ fence: 1, outcome: 'fenced_out' });
    const zombieEnd = jobs.sideEffects.filter((effect) => effect.key === run.executionKey && effect.worker === 'test-worker');
    expect(zombieEnd.map((effect) => effect.aborted)).toEqual([false, true]);
    expect(run.events.find((event) => event.type === 'fenced_out')?.error).toMatch(LeaseLostError.name);
    // Its late ctx.commit threw the LeaseLostError at once: nothing was sent. The standby kept its lease, waited
    // its 4 s out and committed.
    expect(run.zombie.handler?.kind === 'threw' && run.zombie.handler.error).toBeInstanceOf(LeaseLostError);
    expect(run.commits.map((commit) => [commit.worker, commit.result])).toEqual([['test-standby', 'landed']]);
    expect(run.ledger).toMatchObject({ fence: 2, owner: 'test-standby' });
  });
});
