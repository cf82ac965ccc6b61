/**
 * The one commit of one attempt, as `ctx.commit` exposes it:
 *
 *   none ──call──▶ pending ──landed──▶ landed
 *                     └──────refused──▶ failed
 *
 * - `ctx.commit` may be called once per attempt; a second call throws
 *   AlreadyCommittedError whatever became of the first (it may be in flight,
 *   or its outcome may be unknown: writing other items then could commit
 *   writes the first call never meant together).
 * - A handler that returns without calling it is committed with no writes;
 *   one that returns after a failed commit (having caught the error) fails
 *   its attempt with that error: it never becomes an empty SUCCEEDED.
 * - When a timeout or a lost lease ends the attempt while the commit is in
 *   flight, the commit's own outcome decides: a commit that landed is
 *   committed, never dead-lettered.
 */
import type { Clock } from '../core/clock.ts';
import { AlreadyCommittedError } from '../core/errors.ts';
import type { BusinessWrite } from '../core/ports.ts';

type CommitState =
  | { readonly kind: 'none' }
  | { readonly kind: 'pending'; readonly done: Promise<void> }
  | { readonly kind: 'landed' }
  | { readonly kind: 'failed'; readonly error: unknown };

export class AttemptCommit {
  private state: CommitState = { kind: 'none' };

  constructor(
    private readonly clock: Clock,
    private readonly executionKey: string,
    private readonly signal: AbortSignal,
    private readonly abortReason: () => Error,
    private readonly send: (writes: readonly BusinessWrite[]) => Promise<void>,
  ) {}

  get landed(): boolean {
    return this.state.kind === 'landed';
  }

  /** Sent, and no reply yet. */
  get pending(): boolean {
    return this.state.kind === 'pending';
  }

  /** What `ctx.commit(writes)` does. */
  call(writes: readonly BusinessWrite[]): Promise<void> {
    if (this.state.kind !== 'none') return Promise.reject(new AlreadyCommittedError(this.executionKey));
    if (this.signal.aborted) return Promise.reject(this.abortReason());
    const done = this.send(writes).then(
      () => {
        this.state = { kind: 'landed' };
      },
      (error: unknown) => {
        this.state = { kind: 'failed', error };
        throw error;
      },
    );
    this.state = { kind: 'pending', done };
    return done;
  }

  /** The handler returned: commit with no writes if it never called commit; fail if its commit failed. */
  async afterHandlerReturned(): Promise<void> {
    const state = this.state;
    if (state.kind === 'none') return this.call([]);
    if (state.kind === 'pending') return state.done;
    if (state.kind === 'failed') throw state.error;
  }

  /**
   * The attempt ended with `error`: waits up to `maxWaitMs` for a commit still
   * in flight, then says what ended the attempt (the commit's own failure, if
   * it failed). A commit still pending after that is the caller's to look up.
   */
  async settledCause(error: unknown, maxWaitMs: number): Promise<unknown> {
    if (this.state.kind === 'pending') {
      const waited = new AbortController();
      await Promise.race([this.state.done.catch(() => {}), this.clock.sleep(maxWaitMs, waited.signal).catch(() => {})]);
      waited.abort();
    }
    const state: CommitState = this.state;
    return state.kind === 'failed' ? state.error : error;
  }
}
