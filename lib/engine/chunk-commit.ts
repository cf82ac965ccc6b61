/**
 * The chunked commits of one attempt, as `ctx.commitChunk` and
 * `ctx.committedChunks` expose them.
 *
 * - The checkpoint (the chunks earlier claims committed) is read once, on the
 *   first call, after this attempt's claim: the claim moved the fence, so no
 *   older claim can commit a chunk after the read and the set is complete.
 * - `commitChunk(n, work)` for a chunk in the checkpoint returns
 *   'already-committed' without calling `work`: a standby resumes at the first
 *   uncommitted chunk and redoes none.
 * - A chunk whose reply was lost (timeout, 5xx) is sent again as the same
 *   transaction; the store recognises its own earlier try by fence and owner.
 * - The final commit waits until every chunk in flight has settled, and fails
 *   if one failed: a SUCCEEDED slice has all its chunks. After it, no chunk
 *   may be committed.
 * - A chunk named with an input (`ChunkOptions`) keeps its digest on its
 *   record. A committed chunk named again with another input, or, once this
 *   attempt named any input, a committed chunk with an input this attempt did
 *   not name by the final commit, fails with ChunkInputChangedError: the list
 *   changed between attempts in a way the committed chunks cannot account for.
 */
import {
  chunkInputChange,
  chunkInputDigest,
  chunkProblem,
  type ChunkCommitOutcome,
  type ChunkOptions,
  type ChunkRecord,
  type ChunkStore,
  type ChunkWork,
} from '../core/chunks.ts';
import type { Clock } from '../core/clock.ts';
import { ChunkInputChangedError, InvalidChunkError } from '../core/errors.ts';
import { sendAgainWhileUnsure } from './send-again.ts';
import { executionKey } from '../core/execution-key.ts';
import type { SliceKey } from '../core/slice.ts';

export interface AttemptChunksOptions {
  readonly store: ChunkStore | undefined;
  readonly key: SliceKey;
  readonly fence: number;
  readonly owner: string;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly abortReason: () => Error;
  readonly random?: () => number;
}

export class AttemptChunks {
  /** Committed chunks by number: their records as read at the first call, and this attempt's own. */
  private checkpoint?: Promise<Map<number, ChunkRecord | undefined>>;
  /** The chunks this attempt named with an input. */
  private readonly named = new Set<number>();
  private readonly inFlight = new Map<number, Promise<ChunkCommitOutcome>>();
  private failure?: unknown;
  private closed = false;
  private readonly executionKey: string;

  constructor(private readonly options: AttemptChunksOptions) {
    this.executionKey = executionKey(options.key.jobId, options.key.scheduledAt);
  }

  /** The chunk numbers committed so far (by earlier claims and by this one). */
  async committed(): Promise<ReadonlySet<number>> {
    if (this.options.store === undefined)
      throw new InvalidChunkError(this.executionKey, 0, 'this worker has no chunk store (wire one into WorkerDeps.chunks)');
    return new Set((await this.loadCheckpoint()).keys());
  }

  /** What `ctx.commitChunk(n, work)` does. */
  async commit(
    n: number,
    work: ChunkWork | (() => ChunkWork | Promise<ChunkWork>),
    options: ChunkOptions = {},
  ): Promise<ChunkCommitOutcome> {
    const refuse = (reason: string): never => {
      throw new InvalidChunkError(this.executionKey, n, reason);
    };
    if (this.options.store === undefined) refuse('this worker has no chunk store (wire one into WorkerDeps.chunks)');
    if (this.closed) refuse('the final commit was already sent; chunks come before ctx.commit');
    if (this.inFlight.has(n)) refuse('is already being committed in this attempt');
    if (this.options.signal.aborted) throw this.options.abortReason();
    const digest = options.input === undefined ? undefined : chunkInputDigest(options.input);
    if (digest !== undefined) this.named.add(n);
    const sending = this.send(n, work, digest);
    this.inFlight.set(n, sending);
    try {
      return await sending;
    } catch (error) {
      this.failure ??= error;
      throw error;
    } finally {
      this.inFlight.delete(n);
    }
  }

  /**
   * Before the final commit: no more chunks; wait for those in flight.
   * @throws the first chunk failure of this attempt (the slice must not succeed without it).
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight.values()]);
    if (this.failure === undefined && this.named.size > 0) this.failure = await this.unnamedCommittedChunk();
    if (this.failure !== undefined) throw this.failure;
  }

  /** A committed chunk with an input that this attempt, which names inputs, left out: its plan no longer has it. */
  private async unnamedCommittedChunk(): Promise<ChunkInputChangedError | undefined> {
    for (const [n, record] of await this.loadCheckpoint()) {
      if (record?.inputDigest === undefined || this.named.has(n)) continue;
      return new ChunkInputChangedError(
        this.executionKey,
        n,
        `committed by fence ${record.fence} from input ${record.inputDigest}, but this attempt's chunks leave it out: the list changed between attempts`,
      );
    }
    return undefined;
  }

  private async send(
    n: number,
    work: ChunkWork | (() => ChunkWork | Promise<ChunkWork>),
    digest: string | undefined,
  ): Promise<ChunkCommitOutcome> {
    const checkpoint = await this.loadCheckpoint();
    if (checkpoint.has(n)) {
      const change = chunkInputChange(checkpoint.get(n), digest);
      if (change !== undefined) throw new ChunkInputChangedError(this.executionKey, n, change);
      return 'already-committed';
    }
    const resolved = typeof work === 'function' ? await work() : work;
    const problem = chunkProblem(n, resolved);
    if (problem !== undefined) throw new InvalidChunkError(this.executionKey, n, problem);
    if (this.options.signal.aborted) throw this.options.abortReason();
    const outcome = await this.sendWithRetries(n, resolved, digest);
    checkpoint.set(n, undefined);
    return outcome;
  }

  private sendWithRetries(n: number, work: ChunkWork, inputDigest: string | undefined): Promise<ChunkCommitOutcome> {
    const { store, key, fence, owner, clock, signal, random } = this.options;
    return sendAgainWhileUnsure(
      () => {
        const request = { key, fence, owner, now: clock.now(), chunk: n, writes: work.writes ?? [], outbox: work.outbox ?? [] };
        return store!.commitChunk(inputDigest === undefined ? request : { ...request, inputDigest });
      },
      { clock, signal, ...(random && { random }) },
    );
  }

  private loadCheckpoint(): Promise<Map<number, ChunkRecord | undefined>> {
    if (this.checkpoint === undefined) {
      const reading = this.options
        .store!.committedChunks(this.options.key)
        .then((records) => new Map(records.map((record): [number, ChunkRecord | undefined] => [record.chunk, record])));
      this.checkpoint = reading;
      // A failed read is not kept: the next call reads again.
      reading.catch(() => {
        if (this.checkpoint === reading) this.checkpoint = undefined;
      });
    }
    return this.checkpoint;
  }
}
