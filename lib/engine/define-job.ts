/**
 * The handler API. A job's code is a function of a context; the engine owns
 * claiming, leasing, fencing and committing around it.
 *
 * ```ts
 * export const settle = defineJob('merchant-settlement', async (ctx) => {
 *   const payout = await computePayout(ctx.scheduledAt, { signal: ctx.signal });
 *   await ctx.commit([{ put: { tableName: 'payouts', item: { id: ctx.executionKey, ...payout } } }]);
 * });
 * ```
 */
import type { ChunkCommitOutcome, ChunkOptions, ChunkWork } from '../core/chunks.ts';
import type { BusinessWrite } from '../core/ports.ts';

export interface JobContext {
  readonly jobId: string;
  /** The occurrence this run is for (second precision, UTC instant). */
  readonly scheduledAt: Date;
  /** `jobId:scheduledAt`: pass it as the idempotency key to systems outside DynamoDB. */
  readonly executionKey: string;
  /** Fencing token: grows with every claim; pass it to systems that can reject stale writers. */
  readonly fence: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborts when the lease is lost or the job's timeout passes; `signal.reason` says which. */
  readonly signal: AbortSignal;
  /** The job's JSON payload. */
  readonly payload: Readonly<Record<string, unknown>>;
  /** Which worker runs this attempt. */
  readonly worker: string;
  /**
   * Commits the slice, the ledger record and `writes` in one DynamoDB
   * transaction, on the fence. Call at most once; a handler that returns
   * without calling it is committed with no writes.
   * @throws {FencedOutError} another worker owns the slice now; nothing was written.
   * @throws {BusinessConditionFailedError} a condition on one of `writes` failed; nothing was written.
   */
  commit(writes?: readonly BusinessWrite[]): Promise<void>;
  /**
   * Commits chunk `n` of a batch too large for one transaction: its writes
   * and outbound requests (`work`, or what `work()` returns) in one DynamoDB
   * transaction with the chunk's record `<executionKey>#chunk-<n>`, on the
   * fence. A chunk an earlier claim committed is not redone: `work` is not
   * called and the result is `'already-committed'`. The slice becomes
   * SUCCEEDED only with `commit` (or the handler's return), which waits for
   * the chunks in flight. Chunks may be committed in any order, concurrently.
   * `options.input` names what the chunk is made of (its row ids): a committed
   * chunk named again with another input, or left out by an attempt that names
   * inputs, fails the slot DEAD (the list changed between attempts).
   * @throws {FencedOutError} another worker owns the slice now; nothing was written.
   * @throws {ChunkInputChangedError} this chunk was committed from another input.
   * @throws {InvalidChunkError} a bad chunk number or request key, or a chunk after the final commit.
   * @throws {TooManyWritesError} more than 98 writes + outbound requests.
   */
  commitChunk(n: number, work: ChunkWork | (() => ChunkWork | Promise<ChunkWork>), options?: ChunkOptions): Promise<ChunkCommitOutcome>;
  /** The chunk numbers committed so far for this slice, by any claim: the checkpoint a standby resumes from. */
  committedChunks(): Promise<ReadonlySet<number>>;
}

export type JobFunction = (ctx: JobContext) => Promise<void>;

export interface JobHandler {
  readonly name: string;
  readonly run: JobFunction;
}

/** Names a handler; jobs refer to it by this name. */
export function defineJob(name: string, run: JobFunction): JobHandler {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
    throw new TypeError(`defineJob: invalid handler name ${JSON.stringify(name)}`);
  }
  return { name, run };
}

export class HandlerRegistry {
  private readonly handlers = new Map<string, JobHandler>();

  constructor(handlers: Iterable<JobHandler> = []) {
    for (const handler of handlers) this.register(handler);
  }

  register(handler: JobHandler): this {
    if (this.handlers.has(handler.name)) throw new TypeError(`handler ${JSON.stringify(handler.name)} is defined twice`);
    this.handlers.set(handler.name, handler);
    return this;
  }

  get(name: string): JobHandler | undefined {
    return this.handlers.get(name);
  }

  names(): string[] {
    return [...this.handlers.keys()].sort();
  }
}
