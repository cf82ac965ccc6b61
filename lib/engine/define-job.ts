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
