/**
 * The settlement in the simulation: the story's chunked job
 * (examples/jobs/settlement.ts) every minute, paying each merchant through
 * the outbox; OutboxDispatcher processes delivering its wires to the mock
 * bank's rule (examples/jobs/mock-bank.ts: one booking per idempotency key,
 * some requests refused with 503, some booked and then left unanswered) over
 * the simulated network; and the settlement drill's checks
 * (tools/chaos/settlement-checks.ts): one payout row and one accepted wire per
 * merchant, every chunk committed by one attempt, every settlement SUCCEEDED.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { Slice } from '../../lib/core/slice.ts';
import { OutboxDispatcher, type DeliverRequest } from '../../lib/engine/outbox-dispatcher.ts';
import type { MemoryInstallation } from '../../lib/memory/index.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { merchantSettlement } from '../../examples/jobs/settlement.ts';
import type { ExpectedOccurrence } from '../chaos/expected.ts';
import type { InjectedProcessFault, ObservedChunk } from '../chaos/observed.ts';
import { SeededRandom } from '../chaos/random.ts';
import { checkSettlement, settlementViolations, type SettlementVerdict } from '../chaos/settlement-checks.ts';
import { BANK_FAULTS, SETTLEMENT_JOB_ID } from '../chaos/settlement-drill.ts';
import type { Failover } from '../chaos/takeovers.ts';
import type { SimNetwork } from './sim-network.ts';
import type { SimProcess } from './sim-process.ts';

export const SIM_PAYOUTS_TABLE = 'sim-payouts';
const MERCHANTS = 120;
const PER_CHUNK = 20;
export const SIM_SETTLEMENT_CHUNKS = MERCHANTS / PER_CHUNK;
const CHUNKS = SIM_SETTLEMENT_CHUNKS;
const BANK_URL = 'https://bank.sim';
/** The dispatcher's settings in the settlement drill. */
const DISPATCH = { concurrency: 4, takeMs: 5000, backoff: { baseMs: 100, maxMs: 2000 }, idleMs: 250, limit: 100 } as const;

/** The fast settlement, paying through the simulated bank. */
export function settlementSpec(): JobSpecInput & { id: string } {
  return {
    id: SETTLEMENT_JOB_ID,
    schedule: '30 * * * * *',
    timeZone: 'Asia/Kolkata',
    handler: merchantSettlement.name,
    payload: { merchants: MERCHANTS, merchantsPerChunk: PER_CHUNK, bankUrl: BANK_URL, payoutsTable: SIM_PAYOUTS_TABLE },
    policies: { maxAttempts: 10, timeoutMs: 60_000, backoffBaseMs: 200, backoffMaxMs: 1000, catchUpWindowMs: 3_600_000 },
  };
}

/** The bank, answering each wire after a leg of the network there, and its answer after a leg back. */
export class SimBank {
  private readonly bank: MockBank;

  constructor(seed: number) {
    const random = new SeededRandom(seed * 31 + 13);
    this.bank = new MockBank({ ...BANK_FAULTS, random: () => random.next() });
  }

  /** `process`'s requests to the bank: a paused one's wait for its resume, a killed one's never end. */
  deliverFrom(process: SimProcess, network: SimNetwork): DeliverRequest {
    return async ({ headers, body, signal }) => {
      await process.sleep(network.leg(), signal);
      const answer = this.bank.wire({ idempotencyKey: headers['idempotency-key'], body, fence: headers['x-cronfence-fence'] });
      await process.sleep(network.leg(), signal);
      // A connection closed before any answer: fetch rejects, the outcome unknown to the sender.
      if ('dropped' in answer) throw new TypeError('fetch failed: the bank closed the connection (simulated)');
      return { status: answer.status };
    };
  }

  /** The wires the bank accepted for an execution, by the merchant each pays. */
  wiresOf(key: string): { merchant: string }[] {
    return [...this.bank.booked.values()]
      .filter((wire) => wire.idempotencyKey.startsWith(`${key}#`))
      .map((wire) => ({ merchant: String((JSON.parse(wire.body) as { merchant?: unknown }).merchant) }));
  }
}

/** A dispatcher process: the OutboxDispatcher's loop over the simulated outbox table, until the process dies. */
export function startDispatcher(
  process: SimProcess,
  install: MemoryInstallation,
  network: SimNetwork,
  bank: SimBank,
  random: SeededRandom,
  onError: (error: unknown, where: string) => void,
): void {
  const dispatcher = new OutboxDispatcher({
    store: network.connect(install.outbox, process, 'dynamodb'),
    clock: process,
    deliver: bank.deliverFrom(process, network),
    deadLetters: network.connect(install.deadLetters, process, 'sqs'),
    concurrency: DISPATCH.concurrency,
    takeMs: DISPATCH.takeMs,
    backoff: DISPATCH.backoff,
    random: () => random.next(),
    onError,
  });
  void process
    .gate()
    .then(() => dispatcher.run(new AbortController().signal, DISPATCH.idleMs, DISPATCH.limit))
    .catch((error: unknown) => onError(error, 'outbox dispatcher'));
}

export interface SettlementCheckContext {
  readonly install: MemoryInstallation;
  readonly bank: SimBank;
  readonly expected: readonly ExpectedOccurrence[];
  readonly slices: readonly Slice[];
  readonly chunks: readonly ObservedChunk[];
  readonly failovers: readonly Failover[];
  readonly processFaults: readonly InjectedProcessFault[];
}

/** The settlement drill's checks over every settlement occurrence of the window, and what they found broken. */
export async function checkSimSettlement(context: SettlementCheckContext): Promise<{ verdict: SettlementVerdict; violations: string[] }> {
  const { install } = context;
  const statusOf = new Map(context.slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice.status as string]));
  const rows = install.tables.businessItems(SIM_PAYOUTS_TABLE);
  const occurrences = await Promise.all(
    context.expected
      .filter((occurrence) => occurrence.jobId === SETTLEMENT_JOB_ID)
      .map(async ({ jobId, scheduledAt, executionKey: key }) => {
        const outbox: Record<string, number> = {};
        for (const item of await install.outbox.list(key)) outbox[item.status] = (outbox[item.status] ?? 0) + 1;
        return {
          executionKey: key,
          status: statusOf.get(key),
          chunkRecords: (await install.chunks.committedChunks({ jobId, scheduledAt })).map(({ chunk, fence, committedAt }) => ({
            chunk,
            fence,
            committedAt,
          })),
          payouts: rows
            .filter((row) => String(row.payoutId).startsWith(`${key}#`))
            .map((row) => ({ merchant: String(row.merchant), chunk: Number(row.chunk), fence: Number(row.fence) })),
          wires: context.bank.wiresOf(key),
          outbox,
        };
      }),
  );
  const verdict = checkSettlement({
    merchants: MERCHANTS,
    chunks: CHUNKS,
    occurrences,
    reports: context.chunks,
    failovers: context.failovers,
    processFaults: context.processFaults,
  });
  // The failover bound is the simulation's own check, over every slice.
  return { verdict, violations: settlementViolations(verdict, { merchants: MERCHANTS, chunks: CHUNKS, failoverBoundMs: Infinity }) };
}

/** The settlements' summary rows: each final commit's business write (the history check's `succeededWithoutWrites`). */
export function settlementSummaries(install: MemoryInstallation): { executionKey: string; fence: number; worker: string }[] {
  return install.tables
    .businessItems(SIM_PAYOUTS_TABLE)
    .filter((row) => String(row.payoutId).startsWith(`${SETTLEMENT_JOB_ID}:`) && !String(row.payoutId).includes('#'))
    .map((row) => ({ executionKey: String(row.payoutId), fence: Number(row.fence), worker: String(row.worker) }));
}
