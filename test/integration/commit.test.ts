/**
 * The business write and the ledger record commit together or not at all,
 * and never for a fenced-out worker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusinessConditionFailedError, FencedOutError } from '../../lib/core/errors.ts';
import type { BusinessWrite } from '../../lib/core/ports.ts';
import { LEASE_EXPIRY_MARGIN_MS } from '../../lib/core/slice.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { businessRow, createBusinessTable } from '../support/business-table.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
let payouts: string;
beforeAll(async () => {
  installation = await createTestInstallation();
  payouts = await createBusinessTable(installation);
});
afterAll(() => installation?.destroy());

const payout = (id: string, amount: number): BusinessWrite => ({
  put: { tableName: payouts, item: { id, amount }, conditionExpression: 'attribute_not_exists(id)' },
});

describe('commit', () => {
  it('writes the slice, the ledger record and the business row together', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(installation, { id: 'commit-ok' }, wholeSecond(60_000));
    await slices.claim(key, 'w1', Date.now());
    await slices.commit({ key, fence: 1, owner: 'w1' }, Date.now(), [payout('p-ok', 100)]);
    expect((await slices.get(key))?.status).toBe('SUCCEEDED');
    expect(await slices.getLedger(key)).toMatchObject({ fence: 1, owner: 'w1', outcome: 'SUCCEEDED' });
    expect(await businessRow(installation, payouts, 'p-ok')).toEqual({ id: 'p-ok', amount: 100 });
  });

  it('a failed business condition writes nothing: no ledger record, the slice still running', async () => {
    const { slices } = installation.runtime;
    const { key: first } = await enqueuedSlice(installation, { id: 'commit-seed' }, wholeSecond(60_000));
    await slices.claim(first, 'w1', Date.now());
    await slices.commit({ key: first, fence: 1, owner: 'w1' }, Date.now(), [payout('p-taken', 1)]);

    const { key } = await enqueuedSlice(installation, { id: 'commit-conflict' }, wholeSecond(60_000));
    await slices.claim(key, 'w2', Date.now());
    const error = await slices
      .commit({ key, fence: 1, owner: 'w2' }, Date.now(), [payout('p-new', 5), payout('p-taken', 7)])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusinessConditionFailedError);
    expect((error as BusinessConditionFailedError).writeIndex).toBe(1);
    expect(await slices.getLedger(key)).toBeUndefined();
    expect(await slices.get(key)).toMatchObject({ status: 'RUNNING', fence: 1, owner: 'w2' });
    expect(await businessRow(installation, payouts, 'p-new')).toBeUndefined();
    expect(await businessRow(installation, payouts, 'p-taken')).toEqual({ id: 'p-taken', amount: 1 });
  });

  it('a fenced-out worker writes neither its business row nor a ledger record', async () => {
    const { slices } = installation.runtime;
    const { key } = await enqueuedSlice(
      installation,
      { id: 'commit-zombie', policies: { leaseMs: 2000, heartbeatMs: 500 } },
      wholeSecond(60_000),
    );
    const t0 = Date.now();
    await slices.claim(key, 'zombie', t0);
    await slices.claim(key, 'standby', t0 + 2001 + LEASE_EXPIRY_MARGIN_MS);
    await expect(slices.commit({ key, fence: 1, owner: 'zombie' }, t0 + 2100, [payout('p-zombie', 9)])).rejects.toBeInstanceOf(
      FencedOutError,
    );
    expect(await businessRow(installation, payouts, 'p-zombie')).toBeUndefined();
    expect(await slices.getLedger(key)).toBeUndefined();
    await slices.commit({ key, fence: 2, owner: 'standby' }, t0 + 2200, [payout('p-standby', 9)]);
    expect(await businessRow(installation, payouts, 'p-standby')).toEqual({ id: 'p-standby', amount: 9 });
    expect(await slices.getLedger(key)).toMatchObject({ fence: 2, owner: 'standby' });
  });
});
