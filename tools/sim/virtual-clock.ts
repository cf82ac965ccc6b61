/**
 * Virtual time for the simulator: `now` moves only when `run` advances it,
 * and it advances to the next timer only once every task is waiting (the
 * event loop has nothing left to run but timers). The engine's waits all go
 * through the Clock (lib/core/clock.ts), so an hour of its timers passes in
 * as long as its work takes to run. Timers due at one instant fire in the
 * order they were set: the same program gives the same interleaving.
 */
import type { Clock } from '../../lib/core/clock.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
  cancelled: boolean;
}

export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  /** A binary min-heap by (at, seq). */
  private readonly heap: Timer[] = [];

  constructor(startAt: number) {
    this.current = startAt;
  }

  now(): number {
    return this.current;
  }

  elapsed(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = (): void => {
        timer.cancelled = true;
        reject(signal?.reason);
      };
      const timer = this.schedule(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  timeout(ms: number): AbortSignal {
    const controller = new AbortController();
    this.schedule(ms, () => controller.abort(new DOMException('The operation timed out.', 'TimeoutError')));
    return controller.signal;
  }

  /** Runs every task, advancing time timer by timer, until `until` (or until nothing is left to wait for). */
  async run(until: number): Promise<void> {
    for (;;) {
      await settle();
      const next = this.peek();
      if (next === undefined || next.at > until) {
        this.current = Math.max(this.current, until);
        return;
      }
      this.current = Math.max(this.current, next.at);
      while (this.peek()?.at === next.at) this.pop()?.fire();
    }
  }

  /** Timers still set; a finished simulation has only its processes' idle waits left. */
  get pendingTimers(): number {
    return this.heap.filter((timer) => !timer.cancelled).length;
  }

  private schedule(ms: number, fire: () => void): Timer {
    const timer: Timer = { at: this.current + Math.max(0, Math.ceil(ms)), seq: this.seq++, fire, cancelled: false };
    this.heap.push(timer);
    this.siftUp(this.heap.length - 1);
    return timer;
  }

  /** The earliest live timer, dropping cancelled ones on the way. */
  private peek(): Timer | undefined {
    while (this.heap[0]?.cancelled) this.pop();
    return this.heap[0];
  }

  private pop(): Timer | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (this.heap.length > 0 && last !== undefined) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private siftUp(index: number): void {
    for (let i = index; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!before(this.heap[i] as Timer, this.heap[parent] as Timer)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    for (let i = index; ;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < this.heap.length && before(this.heap[left] as Timer, this.heap[least] as Timer)) least = left;
      if (right < this.heap.length && before(this.heap[right] as Timer, this.heap[least] as Timer)) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    const held = this.heap[a] as Timer;
    this.heap[a] = this.heap[b] as Timer;
    this.heap[b] = held;
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Lets every task that can run, run: promise jobs first, then a macrotask
 * turn, twice (a promise chain resolved from a macrotask, such as a stream's
 * callback, gets its turn too). Nothing in a simulation does real I/O, so
 * what is still pending after this waits for a timer.
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
