/**
 * The settlement handler through cronfence's real claim, lease, chunked
 * commits and outbox, on the local emulator (started here, or
 * AWS_ENDPOINT_URL's), with a bank that honours idempotency keys.
 */
import { FencedOutError } from 'cronfence';
import { startCronfenceTest, type CronfenceTest } from 'cronfence/testing';
import * as jobs from '../src/cron-jobs';
import { startTestBank, type TestBank } from './bank-server';

jest.setTimeout(240_000);

let cron: CronfenceTest;
let bank: TestBank;
beforeAll(async () => {
  bank = await startTestBank();
  process.env.BANK_URL = bank.url;
  cron = await startCronfenceTest({ jobs });
});
afterAll(async () => {
  delete process.env.BANK_URL;
  await bank?.close();
  await cron?.stop();
});

const merchants = Array.from({ length: 1200 }, (_, i) => `m${String(i + 1).padStart(4, '0')}`);

/** What the bank booked for one execution, by merchant. */
function wiresOf(executionKey: string): string[] {
  return [...bank.booked.entries()].filter(([key]) => key.startsWith(`${executionKey}#`)).map(([, wire]) => wire.body.merchant);
}

test('one run pays 1,200 merchants: 30 chunks of payout rows, then the outbox delivers one wire per merchant', async () => {
  const run = await cron.runSlice('merchant-settlement', { scheduledAt: '2027-01-01T02:00:00+05:30' });

  expect(run.outcome).toBe('committed');
  expect(run.executionKey).toBe('merchant-settlement:2026-12-31T20:30:00Z');
  expect(run.ledger).toMatchObject({ outcome: 'SUCCEEDED', fence: 1 });
  const rows = (await cron.items('payouts')).filter((row) => String(row.payoutId).startsWith(run.executionKey));
  expect(
    rows
      .filter((row) => row.payoutId !== run.executionKey)
      .map((row) => row.merchant)
      .sort(),
  ).toEqual(merchants);
  expect(rows.find((row) => row.payoutId === run.executionKey)).toMatchObject({ merchants: 1200, chunks: 30, fence: 1 });

  const outbox = await cron.deliverOutbox(run.executionKey);
  expect(outbox).toHaveLength(1200);
  expect(outbox.every((item) => item.status === 'DELIVERED')).toBe(true);
  expect(wiresOf(run.executionKey).sort()).toEqual(merchants);
  expect(bank.booked.get(`${run.executionKey}#m0001`)).toMatchObject({
    fence: '1',
    body: { merchant: 'm0001', reference: `${run.executionKey}#m0001` },
  });
});

test('a run that loses its lease after its chunks: the standby skips every committed chunk, the zombie’s commit is refused, each merchant is paid once', async () => {
  const run = await cron.runSliceWithTakeover('merchant-settlement', { scheduledAt: '2027-02-01T02:00:00+05:30' });

  expect(run.zombie).toMatchObject({ outcome: 'fenced_out', fence: 1 });
  expect(run.takeover).toMatchObject({ outcome: 'committed', fence: 2 });
  expect(run.zombie.handler?.kind === 'threw' && run.zombie.handler.error).toBeInstanceOf(FencedOutError);
  // The standby resumed at the checkpoint: every payout row is the first run's (fence 1), none rewritten.
  const rows = (await cron.items('payouts')).filter((row) => String(row.payoutId).startsWith(`${run.executionKey}#`));
  expect(rows).toHaveLength(1200);
  expect(new Set(rows.map((row) => row.fence))).toEqual(new Set([1]));
  expect(run.ledger).toMatchObject({ outcome: 'SUCCEEDED', fence: 2, owner: run.takeover?.worker });

  await cron.deliverOutbox(run.executionKey);
  expect(wiresOf(run.executionKey).sort()).toEqual(merchants);
});
