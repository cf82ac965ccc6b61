/**
 * What the contract suite needs from an installation, and the two that
 * provide it: the in-memory stores (lib/memory) and the DynamoDB adapters
 * over the emulator. Every case passes its own `now`, so both stores see the
 * same instants whatever their clocks say.
 */
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { definitionOf, isTombstone, type StoredJob } from '../../lib/core/job-record.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import type { ChunkStore, OutboxStore } from '../../lib/core/chunks.ts';
import type { JobReader, OverlapStore, SliceStore, WheelStore } from '../../lib/core/ports.ts';
import { DynamoOverlapStore } from '../../lib/aws/dynamo/overlap-ops.ts';
import type { Slice, SliceKey } from '../../lib/core/slice.ts';
import { createMemoryInstallation } from '../../lib/memory/index.ts';
import { businessRow, createBusinessTable } from '../support/business-table.ts';
import { createTestInstallation } from '../support/harness.ts';

export interface ContractInstallation {
  readonly slices: SliceStore;
  readonly chunks: ChunkStore;
  readonly outbox: OutboxStore;
  /** The timing wheel's inbox, entries and cursor (core/wheel.ts). */
  readonly wheel: WheelStore;
  /** Job records as scanners, the reconciler and workers read them. */
  readonly jobReader: JobReader;
  /** The overlap policy's reads and writes (core/overlap-policy.ts). */
  readonly overlap: OverlapStore;
  /** The shard every job lands on (one shard). */
  readonly shard: number;
  /** The store's sweep grace: a claim's sweep time is now + the job's timeout + this. */
  readonly sweepGraceMs: number;
  /** Creates or changes a job through the store's own repository (generation, inbox, settle and all). */
  putJob(input: JobSpecInput): Promise<StoredJob>;
  pauseJob(id: string): Promise<StoredJob>;
  /** Deletes a job through the store's own repository (a tombstone stays). @returns whether there was one. */
  deleteJob(id: string): Promise<boolean>;
  /** The job as stored now, read through the JobReader (undefined when there is none, or only a tombstone). */
  storedJob(id: string): Promise<StoredJob | undefined>;
  /** A table of the user's own with key attribute `id`, for commit writes. */
  readonly businessTable: string;
  businessItem(id: string): Promise<Record<string, unknown> | undefined>;
  destroy(): void;
}

export type ContractFactory = () => Promise<ContractInstallation>;

export const memoryFactory: ContractFactory = async () => {
  const memory = createMemoryInstallation({
    clock: new ManualClock(Date.parse('2030-01-01T00:00:00Z')),
    businessTables: { payouts: ['id'] },
  });
  const jobs = memory.jobs();
  return {
    slices: memory.slices,
    chunks: memory.chunks,
    outbox: memory.outbox,
    wheel: memory.wheel,
    jobReader: memory.jobReader,
    overlap: memory.overlap,
    shard: 0,
    sweepGraceMs: memory.tables.sweepGraceMs,
    putJob: async (input) => (await jobs.put(input)).job,
    pauseJob: async (id) => (await jobs.pause(id)).job,
    deleteJob: async (id) => (await jobs.delete(id)).deleted,
    storedJob: (id) => liveJob(memory.jobReader, id),
    businessTable: 'payouts',
    businessItem: async (id) => memory.tables.businessItems('payouts').find((item) => item.id === id),
    destroy: () => {},
  };
};

export const dynamoFactory: ContractFactory = async () => {
  const installation = await createTestInstallation();
  const { runtime } = installation;
  const jobs = runtime.jobs();
  const businessTable = await createBusinessTable(installation);
  return {
    slices: runtime.slices,
    chunks: runtime.chunks,
    outbox: runtime.outbox,
    wheel: runtime.wheel,
    jobReader: runtime.jobReader,
    overlap: new DynamoOverlapStore(runtime.clients.dynamo, runtime.config),
    shard: 0,
    sweepGraceMs: runtime.config.sweepGraceMs,
    putJob: async (input) => (await jobs.put(input)).job,
    pauseJob: async (id) => (await jobs.pause(id)).job,
    deleteJob: async (id) => (await jobs.delete(id)).deleted,
    storedJob: (id) => liveJob(runtime.jobReader, id),
    businessTable,
    businessItem: (id) => businessRow(installation, businessTable, id),
    destroy: () => installation.destroy(),
  };
};

async function liveJob(reader: JobReader, id: string): Promise<StoredJob | undefined> {
  const record = await reader.record(id);
  return record === undefined || isTombstone(record) ? undefined : record;
}

/** Each case's own job ids, instants and wheel shards, so cases sharing one emulator installation never meet. */
export class CaseSpace {
  private jobs = 0;
  private days = 0;
  private shards = 0;

  /** A job id not used before in this run. */
  jobId(name: string): string {
    this.jobs++;
    return `${name}-${this.jobs}`;
  }

  /** A whole-second instant a day after the last one handed out. */
  instant(): number {
    this.days++;
    return Date.parse('2030-01-01T00:00:00Z') + this.days * 86_400_000;
  }

  /** A wheel shard no job lands on (jobs go to shard 0, and put their generation in its inbox). */
  wheelShard(): number {
    this.shards++;
    return 1000 + this.shards;
  }
}

export const FAST_POLICIES = { leaseMs: 4000, heartbeatMs: 1000, timeoutMs: 10_000, maxAttempts: 3 } as const;

/** A per-second job with the fast policies. */
export function jobSpec(id: string, payload?: Record<string, unknown>): JobSpecInput {
  return { id, schedule: '* * * * * *', handler: 'h', payload, policies: FAST_POLICIES };
}

/** A job and ENQUEUED slices at `instants` in the sweep index, created as the reconciler creates them (SliceStore.enqueue). */
export async function enqueued(
  store: ContractInstallation,
  jobId: string,
  instants: readonly number[],
  now: number,
  options: { sweepAt?: (instant: number) => number } = {},
): Promise<{ job: StoredJob; keys: SliceKey[] }> {
  const job = await store.putJob(jobSpec(jobId));
  const keys = instants.map((scheduledAt) => ({ jobId, scheduledAt }));
  const slices = keys.map((key) => ({ ...key, sweepAt: options.sweepAt?.(key.scheduledAt) ?? key.scheduledAt + 30_000 }));
  const created = await store.slices.enqueue(definitionOf(job), slices, now);
  if (created.length !== keys.length) throw new Error(`could not create slices: created only ${JSON.stringify(created)}`);
  return { job, keys };
}

/** One ENQUEUED slice claimed by `owner` at `now`. */
export async function claimed(
  store: ContractInstallation,
  jobId: string,
  at: number,
  owner = 'worker-a',
  messageId = 'message-a',
): Promise<{ key: SliceKey; slice: Slice }> {
  const { keys } = await enqueued(store, jobId, [at], at);
  const key = keys[0]!;
  const claim = await store.slices.claim(key, owner, at, messageId);
  if (!claim.won) throw new Error(`claim of a fresh slice lost: ${JSON.stringify(claim)}`);
  return { key, slice: claim.slice };
}

/** One slice created by the claim of a scanner's message (it carries the job's definition): RUNNING, out of the sweep index. */
export async function createdByClaim(
  store: ContractInstallation,
  job: StoredJob,
  at: number,
  owner = 'worker-a',
  messageId = 'message-a',
): Promise<{ key: SliceKey; slice: Slice }> {
  const key = { jobId: job.id, scheduledAt: at };
  const claim = await store.slices.claim(key, owner, at, messageId, 1, definitionOf(job));
  if (!claim.won) throw new Error(`creating claim lost: ${JSON.stringify(claim)}`);
  return { key, slice: claim.slice };
}

/** Live slices of `jobId` the sweep index holds with sweepAt ≤ now, each with the status its item has now (the index does not project it). */
export async function sweepableOf(
  store: ContractInstallation,
  jobId: string,
  now: number,
): Promise<{ scheduledAt: number; sweepAt: number; status: string }[]> {
  const found = (await store.slices.findSweepable(store.shard, now, 10_000)).filter((candidate) => candidate.jobId === jobId);
  const withStatus = await Promise.all(
    found.map(async ({ scheduledAt, sweepAt }) => ({
      scheduledAt,
      sweepAt,
      status: (await store.slices.get({ jobId, scheduledAt }))?.status ?? 'gone',
    })),
  );
  return withStatus.sort((a, b) => a.scheduledAt - b.scheduledAt);
}
