/**
 * The bench's settlement row arithmetic (tools/bench/settlement-cost.ts):
 * units from a meter snapshot (base tables and indexes), dollars per million
 * payouts at the price table, and 1,200 payouts' time beside the ceiling.
 */
import { describe, expect, it } from 'vitest';
import { PRICE_TABLE } from '../../tools/bench/price-table.ts';
import { settlementRow, settlementUnits, usdPerMillionPayouts, type SettlementCost } from '../../tools/bench/settlement-cost.ts';
import { emptySnapshot } from '../../tools/meter/request-meter.ts';

describe('bench settlement row', () => {
  it('counts base-table and index write units, and read units', () => {
    const snapshot = emptySnapshot();
    snapshot.writeUnits.dynamoTransactWrite = 4920;
    snapshot.writeUnits.dynamoWrite = 2;
    snapshot.indexWriteUnits['chunks/outbox'] = 1200;
    snapshot.readUnits.dynamoRead = 60;
    expect(settlementUnits(snapshot)).toEqual({ write: 6122, read: 60 });
  });

  it('prices units per payout at the price table', () => {
    expect(usdPerMillionPayouts(10, 0)).toBeCloseTo(10 * PRICE_TABLE.dynamoWriteRequestUnitPerMillion, 2);
    expect(usdPerMillionPayouts(10.06, 0.81)).toBeCloseTo(10.06 * 0.625 + 0.81 * 0.125, 2);
  });

  it('scales a smaller settlement to 1,200 payouts and puts its item writes at the ceiling rate', () => {
    const cost = { merchants: 400, commitSeconds: 2, wireSeconds: 8, itemWrites: 1700 } as SettlementCost;
    expect(settlementRow(cost, 170)).toMatchObject({ secondsFor1200: 30, ceilingSecondsFor1200: 30 });
    expect(settlementRow({ ...cost, merchants: 1200 }, 170)).toMatchObject({ secondsFor1200: 10, ceilingSecondsFor1200: 10 });
  });
});
