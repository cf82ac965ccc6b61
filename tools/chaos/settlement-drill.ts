/**
 * `npm run chaos -- --settlement`: the story's settlement inside the drill.
 * The drill adds the fast variant of merchant-settlement (1,200 merchants in
 * 30 chunks, every minute at :30) with its wires going through the outbox to
 * a local mock bank that honours idempotency keys (and sometimes answers 503,
 * or books a wire and drops the connection). An outbox dispatcher runs in the
 * drill's process, as the outbox Lambda would. Each attempt at a settlement
 * may be killed or paused after a seeded number of its chunks committed
 * (mid-batch), on top of the fault plan's own kills and pauses; then what the
 * stores and the bank hold is read for settlement-checks.ts.
 */
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createTableInput } from '../../lib/aws/bootstrap.ts';
import { scanAll } from '../../lib/aws/dynamo/read-pages.ts';
import type { Clock } from '../../lib/core/clock.ts';
import { executionKey, parseExecutionKey } from '../../lib/core/execution-key.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { Slice } from '../../lib/core/slice.ts';
import { OutboxDispatcher } from '../../lib/engine/outbox-dispatcher.ts';
import { EXAMPLE_JOBS, PAYOUTS_TABLE } from '../../examples/jobs/examples.ts';
import { MERCHANTS_PER_CHUNK, SETTLEMENT_MERCHANTS } from '../../examples/jobs/settlement.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import type { Replica } from '../../lib/local/fleet.ts';
import { MockBank } from '../../examples/jobs/mock-bank.ts';
import { readPatiently } from './drill-stores.ts';
import type { ProcessFaultKind } from './fault-plan.ts';
import type { ObservedChunk } from './observed.ts';
import type { Effect } from './outcomes.ts';
import { stopReplica, type ProcessFaultDeps } from './process-faults.ts';
import { SeededRandom } from './random.ts';
import type { SettlementStoreRecords } from './settlement-checks.ts';
import { MidBatchFaults } from './mid-batch-faults.ts';

export const SETTLEMENT_JOB_ID = 'merchant-settlement-fast';
export const SETTLEMENT_CHUNKS = Math.ceil(SETTLEMENT_MERCHANTS / MERCHANTS_PER_CHUNK);
/**
 * Simulated work per chunk: with the commit, a settlement takes 10 s or more, a window to stop its worker in,
 * and its 30 large transactions are spread out rather than queued at the emulator at once.
 */
const CHUNK_WORK_MS = 500;
/**
 * Deliveries in flight. The emulator serves DynamoDB one request at a time (about 100 a second); 16 lanes of
 * take + record would take all of it for 20 s after each settlement and the drill would measure that, not the
 * engine (takeovers of other slices queued behind the deliveries, seen as 7 s failovers). Two lanes pace them.
 */
const DISPATCH_LANES = 2;
/**
 * And a rest of a second between passes over the four outbox shards: moto answers each index Query by walking the
 * whole chunks table (a settlement adds 1,230 items), so the 200 ms rest the drain uses made about 20 such walks a
 * second beside the drill's own traffic.
 */
const DISPATCH_IDLE_MS = 1000;
/** After the drain the fleet is stopped and the deliveries have the emulator to themselves. */
const DRAIN_DISPATCH_LANES = 8;
const DRAIN_DISPATCH_IDLE_MS = 200;
/** The bank's faults: the dispatcher retries these; a dropped answer after booking is sent again under the same key. */
export const BANK_FAULTS = { unavailableRate: 0.02, dropAfterBookingRate: 0.02 } as const;

export interface SettlementDrillOptions {
  readonly runtime: Runtime;
  readonly prefix: string;
  readonly seed: number;
  readonly clock: Clock;
  /** The process faults that are on (kill, pause); none: the settlement meets only the plan's faults. */
  readonly faultKinds: readonly Extract<ProcessFaultKind, 'kill' | 'pause'>[];
  readonly pauseMs: number;
  readonly process: ProcessFaultDeps;
}

export class SettlementDrill {
  private readonly midBatch: MidBatchFaults;
  private readonly pending: Promise<void>[] = [];
  private dispatching = new AbortController();
  private faulting = true;
  /** Once the window ended, only attempts at occurrences inside it are stopped (while the drain finishes them). */
  private lastScheduledAt = Number.POSITIVE_INFINITY;
  private dispatcherDone: Promise<void> = Promise.resolve();
  /** Mid-batch faults the settlement drill injected (besides the plan's). */
  injected = 0;

  private constructor(
    private readonly options: SettlementDrillOptions,
    readonly bank: MockBank,
  ) {
    this.midBatch = new MidBatchFaults(new SeededRandom(options.seed * 31 + 12), options.faultKinds, SETTLEMENT_CHUNKS);
  }

  /** The payouts table, the bank and the dispatcher. */
  static async start(options: SettlementDrillOptions): Promise<SettlementDrill> {
    const { runtime, prefix } = options;
    const table = `${prefix}-${PAYOUTS_TABLE.logicalName}`;
    await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(table, PAYOUTS_TABLE)));
    await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: table });
    const bankRandom = new SeededRandom(options.seed * 31 + 13);
    const bank = await new MockBank({ ...BANK_FAULTS, random: () => bankRandom.next() }).start();
    const drill = new SettlementDrill(options, bank);
    drill.startDispatcher(DISPATCH_LANES, DISPATCH_IDLE_MS);
    return drill;
  }

  private startDispatcher(lanes: number, idleMs: number): void {
    const dispatcher = new OutboxDispatcher({
      store: this.options.runtime.outbox,
      clock: this.options.clock,
      concurrency: lanes,
      takeMs: 5000,
      backoff: { baseMs: 100, maxMs: 2000 },
    });
    this.dispatching = new AbortController();
    this.dispatcherDone = dispatcher.run(this.dispatching.signal, idleMs, 100);
  }

  /** The fast variant, paying through the bank. */
  spec(): JobSpecInput & { id: string } {
    const fast = EXAMPLE_JOBS.find((job) => job.id === SETTLEMENT_JOB_ID);
    if (!fast) throw new Error(`${SETTLEMENT_JOB_ID} is not among the example jobs`);
    return {
      ...fast,
      id: SETTLEMENT_JOB_ID,
      payload: { merchants: SETTLEMENT_MERCHANTS, bankUrl: this.bank.url, chunkWorkMs: CHUNK_WORK_MS },
      // The drill's emulator is slow and shared: room for retries, and a timeout no takeover chain reaches.
      policies: { maxAttempts: 10, timeoutMs: 180_000, backoffBaseMs: 200, backoffMaxMs: 1000, catchUpWindowMs: 3_600_000 },
    };
  }

  /** A worker's chunk report: stops it when its attempt reached the chunk planned for it. */
  onChunk(observed: ObservedChunk, replica: Replica): void {
    if (!this.faulting || observed.outcome !== 'committed' || !observed.executionKey.startsWith(`${SETTLEMENT_JOB_ID}:`)) return;
    if ((parseExecutionKey(observed.executionKey)?.scheduledAt ?? 0) > this.lastScheduledAt) return;
    const kind = this.midBatch.after(observed);
    if (kind === undefined) return;
    const { fleet, recorder } = this.options.process;
    if (recorder.paused.has(replica.id) || !fleet.list('worker').some((live) => live.id === replica.id)) return;
    this.injected++;
    this.pending.push(stopReplica(this.options.process, replica, kind, this.options.pauseMs));
  }

  /**
   * The window ended at `at`: settlements due after it are left alone, those inside it may still be stopped
   * mid-batch while the drain finishes them (one due late in the window runs mostly after it).
   */
  windowEnded(at: number): void {
    this.lastScheduledAt = at;
  }

  /** No more mid-batch faults; resolves when the paused ones run again and the killed ones are replaced. */
  async stopFaults(): Promise<void> {
    this.faulting = false;
    await Promise.all(this.pending);
  }

  /**
   * Waits (up to `timeoutMs`, the dispatcher on more lanes now that the
   * fleet is stopped) until the bank holds a wire per merchant for each
   * SUCCEEDED occurrence and no outbox item is pending, then reads the
   * payout rows, chunk records and outbox items of each.
   */
  async collect(
    occurrences: readonly { jobId: string; scheduledAt: number }[],
    slices: readonly Slice[],
    timeoutMs: number,
  ): Promise<{ records: SettlementStoreRecords[]; summaries: Effect[] }> {
    const { runtime } = this.options;
    const statusOf = new Map(slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice.status as string]));
    const keys = occurrences.map((o) => executionKey(o.jobId, o.scheduledAt));
    const deadline = Date.now() + timeoutMs;
    await this.stopDispatcher();
    this.startDispatcher(DRAIN_DISPATCH_LANES, DRAIN_DISPATCH_IDLE_MS);
    for (;;) {
      const wired = keys.every((key) => statusOf.get(key) !== 'SUCCEEDED' || this.wiresOf(key).length >= SETTLEMENT_MERCHANTS);
      const pending = wired
        ? (await Promise.all(keys.map((key) => runtime.outbox.list(key).catch(() => [{ status: 'PENDING' }]))))
            .flat()
            .filter((item) => item.status === 'PENDING').length
        : 1;
      if (pending === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    // What is not delivered by now is reported missing; the reads below get the emulator to themselves.
    await this.stopDispatcher();
    const rows = (
      await readPatiently(() =>
        scanAll(runtime.clients.dynamo, { TableName: `${this.options.prefix}-${PAYOUTS_TABLE.logicalName}`, ConsistentRead: true }),
      )
    ).map((item) => unmarshall(item));
    const records = await Promise.all(
      occurrences.map(async ({ jobId, scheduledAt }): Promise<SettlementStoreRecords> => {
        const key = executionKey(jobId, scheduledAt);
        const chunks = await readPatiently(() => runtime.chunks.committedChunks({ jobId, scheduledAt }));
        const outbox = await readPatiently(() => runtime.outbox.list(key));
        const outboxByStatus: Record<string, number> = {};
        for (const item of outbox) outboxByStatus[item.status] = (outboxByStatus[item.status] ?? 0) + 1;
        return {
          executionKey: key,
          status: statusOf.get(key),
          chunkRecords: chunks.map(({ chunk, fence, committedAt }) => ({ chunk, fence, committedAt })),
          payouts: rows
            .filter((row) => String(row.payoutId).startsWith(`${key}#`))
            .map((row) => ({ merchant: String(row.merchant), chunk: Number(row.chunk), fence: Number(row.fence) })),
          wires: this.wiresOf(key),
          outbox: outboxByStatus,
        };
      }),
    );
    // The final commit's summary row is the settlement's business write (the drill's `succeededWithoutWrites` check),
    // for every settlement the stores hold: those due while the window drained too.
    const summaries = rows
      .filter((row) => String(row.payoutId).startsWith(`${SETTLEMENT_JOB_ID}:`) && !String(row.payoutId).includes('#'))
      .map((row): Effect => ({ executionKey: String(row.payoutId), fence: Number(row.fence), worker: String(row.worker) }));
    return { records, summaries };
  }

  /** Stops the dispatcher and the bank. */
  async close(): Promise<void> {
    this.faulting = false;
    await this.stopDispatcher();
    await this.bank.close();
  }

  private async stopDispatcher(): Promise<void> {
    this.dispatching.abort();
    await this.dispatcherDone;
  }

  /** What the bank accepted for an execution, by the merchant each wire pays. */
  private wiresOf(key: string): { merchant: string }[] {
    return [...this.bank.booked.values()]
      .filter((wire) => wire.idempotencyKey.startsWith(`${key}#`))
      .map((wire) => ({ merchant: String((JSON.parse(wire.body) as { merchant?: unknown }).merchant) }));
  }
}
