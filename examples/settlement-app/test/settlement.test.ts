/**
 * The settlement handler through cronfence's real claim, lease and commit
 * path, on the local emulator (started here, or AWS_ENDPOINT_URL's).
 */
import { FencedOutError } from 'cronfence';
import { startCronfenceTest, type CronfenceTest } from 'cronfence/testing';
import * as jobs from '../src/cron-jobs';
import { bank } from '../src/bank';

jest.setTimeout(120_000);

let cron: CronfenceTest;
beforeAll(async () => {
  cron = await startCronfenceTest({ jobs });
});
afterAll(async () => {
  await cron?.stop();
});
afterEach(() => jest.restoreAllMocks());

test('one run of the monthly settlement wires once and commits one payout row with the slice', async () => {
  const wire = jest.spyOn(bank, 'wire');
  const run = await cron.runSlice('merchant-settlement', { scheduledAt: '2027-01-01T02:00:00+05:30' });

  expect(run.outcome).toBe('committed');
  expect(run.executionKey).toBe('merchant-settlement:2026-12-31T20:30:00Z');
  expect(run.ledger).toMatchObject({ outcome: 'SUCCEEDED', fence: 1 });
  expect(wire).toHaveBeenCalledTimes(1);
  expect(wire.mock.calls[0]?.[0]).toMatchObject({ idempotencyKey: run.executionKey, fence: 1, amountMinor: 1200 * 125_000 });
  const payouts = await cron.items('payouts');
  expect(payouts).toEqual([expect.objectContaining({ payoutId: run.executionKey, wireId: `wire-${run.executionKey}`, fence: 1 })]);
  expect(run.writes).toHaveLength(1);
});

test('a run that loses its lease mid-way: the bank sees the same key twice, the table one payout, the zombie a refused commit', async () => {
  const wire = jest.spyOn(bank, 'wire');
  const run = await cron.runSliceWithTakeover('merchant-settlement', { scheduledAt: '2027-02-01T02:00:00+05:30' });

  expect(run.zombie).toMatchObject({ outcome: 'fenced_out', fence: 1 });
  expect(run.takeover).toMatchObject({ outcome: 'committed', fence: 2 });
  // The zombie's ctx.commit threw FencedOutError, which the handler let through.
  expect(run.zombie.handler).toMatchObject({ kind: 'threw' });
  expect(run.zombie.handler?.kind === 'threw' && run.zombie.handler.error).toBeInstanceOf(FencedOutError);
  // Both runs reached the bank, with one idempotency key: the bank pays once.
  expect(wire.mock.calls.map(([request]) => [request.idempotencyKey, request.fence])).toEqual([
    [run.executionKey, 1],
    [run.executionKey, 2],
  ]);
  const payouts = (await cron.items('payouts')).filter((payout) => payout.payoutId === run.executionKey);
  expect(payouts).toEqual([expect.objectContaining({ fence: 2 })]);
  expect(run.ledger).toMatchObject({ outcome: 'SUCCEEDED', fence: 2, owner: run.takeover?.worker });
});
