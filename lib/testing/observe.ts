/**
 * What the test helper watches a run through, without touching the engine:
 * each worker's commits (a slice-store wrapper; the commit of the
 * takeover drill can be held at a gate), and each handler call's own end (a
 * registry wrapper), since a fenced-out handler keeps running after its
 * worker has moved on.
 */
import { defineJob, HandlerRegistry, type JobContext } from '../engine/define-job.ts';
import type { BusinessWrite, SliceStore } from '../core/ports.ts';

export interface CommitRecord {
  readonly worker: string;
  readonly fence: number;
  readonly writes: readonly BusinessWrite[];
  /** 'landed', or the error's `name: message`. */
  readonly result: 'landed' | string;
}

/** How one handler call ended. */
export type HandlerEnd = { readonly worker: string; readonly fence: number } & (
  { readonly kind: 'returned' } | { readonly kind: 'threw'; readonly error: unknown } | { readonly kind: 'running' }
);

/** A handler call of `worker`, with its end to come. */
interface Call {
  readonly worker: string;
  readonly fence: number;
  readonly executionKey: string;
  readonly ended: Promise<HandlerEnd>;
}

export class RunObserver {
  readonly commits: CommitRecord[] = [];
  private readonly calls: Call[] = [];

  /** Records every commit through `store`; `gate`, when given, is awaited before the commit is sent. */
  wrapStore(store: SliceStore, worker: string, gate?: () => Promise<void>): SliceStore {
    const commits = this.commits;
    return new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'commit') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<SliceStore['commit']>) => {
          await gate?.();
          const [{ fence }, , writes] = args;
          try {
            await target.commit(...args);
            commits.push({ worker, fence, writes, result: 'landed' });
          } catch (error) {
            commits.push({ worker, fence, writes, result: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
            throw error;
          }
        };
      },
    });
  }

  /** The same handlers, each call's end recorded. */
  wrapRegistry(registry: HandlerRegistry): HandlerRegistry {
    return new HandlerRegistry(
      registry.names().map((name) => {
        const handler = registry.get(name);
        if (!handler) throw new Error(`registry lost handler ${name}`);
        return defineJob(name, (ctx: JobContext) => {
          const run = handler.run(ctx);
          const ended = run.then(
            (): HandlerEnd => ({ worker: ctx.worker, fence: ctx.fence, kind: 'returned' }),
            (error: unknown): HandlerEnd => ({ worker: ctx.worker, fence: ctx.fence, kind: 'threw', error }),
          );
          this.calls.push({ worker: ctx.worker, fence: ctx.fence, executionKey: ctx.executionKey, ended });
          return run;
        });
      }),
    );
  }

  /** How `worker`'s handler call for `executionKey` ended, waiting up to `waitMs` for one still running. */
  async handlerEnd(worker: string, executionKey: string, waitMs: number): Promise<HandlerEnd | undefined> {
    const call = this.calls.find((candidate) => candidate.worker === worker && candidate.executionKey === executionKey);
    if (!call) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const running = new Promise<HandlerEnd>((resolve) => {
      timer = setTimeout(() => resolve({ worker, fence: call.fence, kind: 'running' }), waitMs);
    });
    const end = await Promise.race([call.ended, running]);
    clearTimeout(timer);
    return end;
  }
}
