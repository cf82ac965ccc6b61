/**
 * What a payout costs in DynamoDB request units, measured with the bench's
 * request meter (tools/meter/request-meter.ts, AWS's published unit rules) on
 * one 1,200-merchant settlement against the emulator: the chunked commits
 * (rows, outbox items and their index entries, chunk records, fence checks)
 * and the outbox deliveries (take + record, each moving the index entry).
 */
import { DeleteMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPatiently } from '../../tools/chaos/drill-stores.ts';
import { OUTBOX_SHARDS } from '../../lib/core/chunks.ts';
import { systemClock } from '../../lib/core/clock.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { OutboxDispatcher } from '../../lib/engine/outbox-dispatcher.ts';
import { merchantSettlement } from '../../examples/jobs/settlement.ts';
import { PRICE_TABLE } from '../../tools/bench/price-table.ts';
import { settlementUnits } from '../../tools/bench/settlement-cost.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { RequestMeter } from '../../tools/meter/request-meter.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { createPayoutsTable } from '../support/settlement-scenario.ts';
import { enqueuedSlice, wholeSecond } from '../support/slices.ts';

let installation: TestInstallation;
const previousPayoutsTable = process.env.CRONFENCE_PAYOUTS_TABLE;
beforeAll(async () => {
  installation = await createTestInstallation();
  process.env.CRONFENCE_PAYOUTS_TABLE = await createPayoutsTable(installation);
});
afterAll(() => {
  process.env.CRONFENCE_PAYOUTS_TABLE = previousPayoutsTable;
  installation?.destroy();
});

describe('cost per payout', () => {
  it('counts the write units of 1,200 payouts: chunked commits, then outbox deliveries', async () => {
    const { runtime } = installation;
    const bank = await new MockBank().start();
    try {
      const { key } = await enqueuedSlice(
        installation,
        // A long lease: this measures cost, not failover, and on a loaded machine a 4 s lease can lapse while 30 large
        // transactions queue at the emulator (the worker then stands down: 'keep', seen in CI).
        {
          id: 'settlement-cost',
          handler: merchantSettlement.name,
          payload: { merchants: 1200, bankUrl: bank.url },
          policies: { timeoutMs: 120_000, leaseMs: 30_000, heartbeatMs: 5000 },
        },
        wholeSecond(-1000),
        [merchantSettlement.name],
      );
      await runtime.workQueue.send([{ ...key, delaySeconds: 0 }]);
      const meter = new RequestMeter(runtime.config).attach(runtime.clients);
      const started = Date.now();
      const worker = runtime.worker('worker-cost', new HandlerRegistry([merchantSettlement]));
      const [message] = await installation.receiveSome(installation.resources.queueUrls.work, 1);
      expect(
        await worker.process({
          body: message!.Body!,
          receiptHandle: message!.ReceiptHandle!,
          messageId: message!.MessageId,
          receiveCount: 1,
        }),
      ).toBe('delete');
      await runtime.clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: installation.resources.queueUrls.work, ReceiptHandle: message!.ReceiptHandle }),
      );
      const settledMs = Date.now() - started;
      const commit = meter.snapshot();
      meter.reset();
      const dispatcher = new OutboxDispatcher({ store: runtime.outbox, clock: systemClock, concurrency: 8 });
      const id = executionKey(key.jobId, key.scheduledAt);
      const dispatchStarted = Date.now();
      // Passes over every shard until two find nothing due. (Not a listing of all 1,200 items between passes: on a
      // loaded machine the emulator took up to 3 s to answer each one, past the client's request timeout.)
      for (let idlePasses = 0; idlePasses < 2;) {
        let moved = 0;
        for (let shard = 0; shard < OUTBOX_SHARDS; shard++) {
          // A timed-out read leaves its items due: the next pass reads them again.
          const pass = await dispatcher.dispatchDue(200, shard).catch(() => undefined);
          moved += pass === undefined ? 1 : pass.delivered + pass.retried + pass.dead;
        }
        idlePasses = moved === 0 ? idlePasses + 1 : 0;
      }
      const dispatchMs = Date.now() - dispatchStarted;
      const deliver = meter.snapshot();
      expect(bank.booked.size).toBe(1200);
      expect((await readPatiently(() => runtime.outbox.list(id))).filter((item) => item.status !== 'DELIVERED')).toEqual([]);

      const commitUnits = settlementUnits(commit);
      const deliverUnits = settlementUnits(deliver);
      const perPayout = (commitUnits.write + deliverUnits.write) / 1200;
      console.info(
        `per payout: commit ${(commitUnits.write / 1200).toFixed(2)} WRU + ${(commitUnits.read / 1200).toFixed(2)} RRU ` +
          `(${commit.kinds.dynamoTransactWrite} transactions, ${commit.transactItems} items), ` +
          `delivery ${(deliverUnits.write / 1200).toFixed(2)} WRU + ${(deliverUnits.read / 1200).toFixed(2)} RRU; ` +
          `$${(((perPayout * PRICE_TABLE.dynamoWriteRequestUnitPerMillion) / 1e6) * 1e6).toFixed(2)} per million payouts in write units; ` +
          `index WRU ${JSON.stringify(commit.indexWriteUnits)} / ${JSON.stringify(deliver.indexWriteUnits)}; ` +
          `1,200 payouts committed in ${settledMs} ms, wired in ${dispatchMs} ms (emulator)`,
      );
      // 30 chunk transactions of 82 items (40 rows, 40 outbox items, chunk record, fence check), the final commit, nothing redone.
      expect(commit.kinds.dynamoTransactWrite).toBe(31);
      // The final commit: the slice (its ledger record) + the summary row.
      expect(commit.transactItems - 30 * 82).toBe(2);
      // Each row and outbox item is one transactional write under 1 KB (2 WRU) and each outbox item one index write:
      // 5 WRU per payout at commit, plus the chunk records and the final commit.
      expect(commitUnits.write / 1200).toBeGreaterThanOrEqual(5);
      expect(commitUnits.write / 1200).toBeLessThan(5.2);
      // Take (1 WRU + the index key moving: 2) and record (1 + the index entry leaving: 1), at least once each.
      expect(deliverUnits.write / 1200).toBeGreaterThanOrEqual(5);
    } finally {
      await bank.close();
    }
  }, 240_000);
});
