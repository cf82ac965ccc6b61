/**
 * The story's settlement against the emulator: 1,200 merchants in 30 chunked
 * commits, the worker paused mid-batch, a standby resuming at the checkpoint,
 * the zombie's late chunk refused by the fence, and every wire delivered
 * through the outbox to a mock bank that honours idempotency keys (with 5 %
 * 503s and 5 % wires booked and then left unanswered). The second case runs
 * the same with the fence check taken out of the zombie's chunk commits, to
 * show the first case's assertions are the fence's doing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOutError } from '../../lib/core/errors.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import { merchantId } from '../../examples/jobs/settlement.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';
import { createPayoutsTable, runSettlementTakeover, type SettlementRun } from '../support/settlement-scenario.ts';
import { unfencedChunkStore } from '../support/unfenced-chunk-store.ts';

const PAUSE_AT = 12;
/**
 * The paused holder's message is back 3 s after its last heartbeat and the standby claims it; LocalStack releases
 * re-visible messages from a once-a-second task, up to a second later (docs/localstack.md).
 */
const FAILOVER_BOUND_MS = process.env.CRONFENCE_EMULATOR === 'localstack' ? 6000 : 5000;
let installation: TestInstallation;
const previousPayoutsTable = process.env.CRONFENCE_PAYOUTS_TABLE;
beforeAll(async () => {
  installation = await createTestInstallation();
  // The example handler names its table from the environment, as in Lambda.
  process.env.CRONFENCE_PAYOUTS_TABLE = await createPayoutsTable(installation);
});
afterAll(() => {
  process.env.CRONFENCE_PAYOUTS_TABLE = previousPayoutsTable;
  installation?.destroy();
});

/** Chunks whose rows were written by another claim than the one on the chunk's record: a committed chunk redone. */
function redoneChunks(run: SettlementRun): number[] {
  const fenceOf = new Map(run.chunks.map((record) => [record.chunk, record.fence]));
  const redone = new Set<number>();
  for (const row of run.payouts)
    if (row.chunk !== undefined && fenceOf.get(Number(row.chunk)) !== Number(row.fence)) redone.add(Number(row.chunk));
  return [...redone].sort((a, b) => a - b);
}

describe('the 1,200-merchant settlement, paused mid-batch and resumed by a standby', () => {
  it('pays every merchant once, in rows and in wires; the standby redoes no committed chunk; the zombie is fenced', async () => {
    const run = await runSettlementTakeover(installation, { jobId: 'settlement-proof', pauseAt: PAUSE_AT });
    const id = executionKey(run.key.jobId, run.key.scheduledAt);
    const rows = run.payouts.filter((row) => String(row.payoutId).includes('#'));
    const summary = run.payouts.filter((row) => row.payoutId === id);
    const expectedMerchants = Array.from({ length: 1200 }, (_, i) => merchantId(i));

    expect(run.slice).toMatchObject({ status: 'SUCCEEDED', fence: 2, owner: 'worker-b' });
    expect(rows).toHaveLength(1200);
    expect(rows.map((row) => row.merchant).sort()).toEqual(expectedMerchants);
    expect(summary).toMatchObject([{ fence: 2, worker: 'worker-b', merchants: 1200, chunks: 30 }]);

    // The checkpoint: A's chunks under fence 1, the rest under B's fence 2; B ran none of A's again.
    expect(run.chunks.map((record) => `${record.chunk}@${record.fence}`)).toEqual(
      Array.from({ length: 30 }, (_, n) => `${n}@${n < PAUSE_AT ? 1 : 2}`),
    );
    expect([...run.standbyChunks].filter(([, outcome]) => outcome === 'already-committed').map(([n]) => n)).toEqual(
      Array.from({ length: PAUSE_AT }, (_, n) => n),
    );
    expect([...run.standbyChunks].filter(([, outcome]) => outcome === 'committed')).toHaveLength(30 - PAUSE_AT);
    expect(redoneChunks(run)).toEqual([]);
    expect(run.late.error).toBeInstanceOf(FencedOutError);

    // The wires: 1,200 outbox items, all delivered; the bank booked each key once.
    expect(run.outbox).toHaveLength(1200);
    expect(run.outbox.filter((item) => item.status !== 'DELIVERED')).toEqual([]);
    expect(run.bank.booked.size).toBe(1200);
    expect([...run.bank.booked.keys()].sort()).toEqual(expectedMerchants.map((merchant) => `${id}#${merchant}`));
    expect(run.failoverMs).toBeLessThan(FAILOVER_BOUND_MS);
    // cronfence verify's chunk check agrees.
    expect(run.verified).toEqual({ executions: 1, chunks: 30, outbox: { pending: 0, delivered: 1200, dead: 0 }, violations: [] });
    console.info(
      `settlement: ${rows.length} payout rows, ${run.bank.booked.size} wires booked (${run.bank.replays} replays answered from the key, ${run.bank.refused} refused 503), ` +
        `${run.standbyChunks.size - (30 - PAUSE_AT)} chunks skipped by the standby, ${redoneChunks(run).length} redone; failover ${run.failoverMs} ms; ` +
        `deliveries ${run.outbox.reduce((sum, item) => sum + item.deliveries, 0)}; SUCCEEDED after ${run.succeededAfterMs} ms, all wires delivered after ${run.elapsedMs} ms; standby errors ${run.standbyErrors.length}`,
    );
  }, 480_000);

  it('without the fence check the same zombie’s late chunk lands after the takeover (what the first case rules out)', async () => {
    const { dynamo } = installation.runtime.clients;
    const run = await runSettlementTakeover(installation, {
      jobId: 'settlement-unfenced',
      pauseAt: PAUSE_AT,
      wrapZombieChunks: (store) => unfencedChunkStore(store, dynamo, installation.runtime.config.chunksTable),
      standbyWaitsForZombie: true,
      // Past the clock-skew margin, so verify can tell it from a chunk that raced the claim.
      zombieWakesAfterMs: 4500,
      wires: false,
    });
    expect(run.late.outcome).toBe('committed');
    const lateRecord = run.chunks.find((record) => record.chunk === PAUSE_AT);
    expect(lateRecord).toMatchObject({ fence: 1, owner: 'worker-a' });
    expect(lateRecord!.committedAt).toBeGreaterThanOrEqual(run.takeoverAt);
    // And cronfence verify reports it.
    expect(run.verified.violations).toMatchObject([
      { kind: 'chunk-after-takeover', detail: expect.stringContaining(`chunk ${PAUSE_AT} of fence 1`) },
    ]);
  }, 180_000);
});
