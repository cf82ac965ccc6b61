/**
 * The real Scanner over a memory engine's stores, with any of its ports
 * swapped for a wrapper: a queue that records every send (and the manual
 * clock's time at it), or a store that fails or is slow (moves the manual
 * clock) on one call. The scanner tests drive the real stores; only a fault
 * needs a wrapper.
 */
import { OffsetClock, type ManualClock, type Clock } from '../../lib/core/clock.ts';
import type { WheelStore, WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import { Scanner, type ScannerDeps } from '../../lib/engine/scanner.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { gate, type MemoryEngine } from './memory-engine.ts';

/**
 * A plain object with every method of `target` bound to it, to spread into a
 * wrapper that replaces one or two: `{ ...delegate(store), place: ... }`.
 */
export function delegate<T extends object>(target: T): T {
  const bound: Record<string, unknown> = {};
  for (
    let proto: object | null = Object.getPrototypeOf(target) as object | null;
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value: unknown = Reflect.get(target, name);
      if (name !== 'constructor' && !(name in bound) && typeof value === 'function')
        bound[name] = (value as (...args: unknown[]) => unknown).bind(target);
    }
  }
  return bound as T;
}

/** A message as it was sent, with the clock's time at the send. */
export interface SentMessage extends WorkMessage {
  readonly sentAt: number;
}

export interface SendHooks {
  /** Before the request: it may throw (nothing is sent). */
  readonly before?: (messages: readonly WorkMessage[]) => void;
  /** After the queue has the messages: a slow reply moves the clock here. */
  readonly after?: (messages: readonly WorkMessage[]) => void;
}

/** `queue`, recording each message it is sent in `log`. */
export function recordingQueue(queue: WorkQueue, clock: Clock, log: SentMessage[], hooks: SendHooks = {}): WorkQueue {
  return {
    ...delegate(queue),
    send: async (messages) => {
      hooks.before?.(messages);
      log.push(...messages.map((message) => ({ ...message, sentAt: clock.now() })));
      await queue.send(messages);
      hooks.after?.(messages);
    },
  };
}

export type ScannerOverrides = Partial<Omit<ScannerDeps, 'scannerId'>>;

/** A Scanner over `engine`'s stores and clock, with `overrides` in their place. */
export function scannerOver(engine: MemoryEngine, scannerId: string, overrides: ScannerOverrides = {}): Scanner {
  return new Scanner({
    scannerId,
    wheel: engine.wheel,
    jobs: engine.jobReader,
    slices: engine.slices,
    queue: engine.workQueue,
    events: engine.events,
    clock: engine.clock,
    lookaheadMs: 120_000,
    sweepGraceMs: engine.tables.sweepGraceMs,
    ...overrides,
  });
}

/** A Scanner over an installation's stores (the emulator's, or AWS), with `overrides` in their place. */
export function scannerOverRuntime(runtime: Runtime, scannerId: string, overrides: ScannerOverrides = {}): Scanner {
  return new Scanner({
    scannerId,
    wheel: runtime.wheel,
    jobs: runtime.jobReader,
    slices: runtime.slices,
    queue: runtime.workQueue,
    events: runtime.events,
    clock: runtime.clock,
    lookaheadMs: runtime.config.lookaheadMs,
    sweepGraceMs: runtime.config.sweepGraceMs,
    ...overrides,
  });
}

/**
 * Two scanners, `skewMs` ahead of `clock` and behind it, take up shard 0's inbox at once: the `first` one stops before
 * it takes its inbox entry up (a scan's last step) until the other has scanned. @returns every message either sent.
 */
export async function raceTwoScanners(
  engine: MemoryEngine,
  clock: ManualClock,
  first: 'ahead' | 'behind',
  skewMs: number,
): Promise<SentMessage[]> {
  const sent: SentMessage[] = [];
  const secondDone = gate();
  const heldBack: WheelStore = {
    ...delegate<WheelStore>(engine.wheel),
    takeFromInbox: async (shard, entry) => {
      await secondDone.opened;
      await engine.wheel.takeFromInbox(shard, entry);
    },
  };
  const scanner = (name: 'ahead' | 'behind') =>
    scannerOver(engine, `scanner-${name}`, {
      clock: new OffsetClock(name === 'ahead' ? skewMs : -skewMs, clock),
      wheel: name === first ? heldBack : engine.wheel,
      queue: recordingQueue(engine.workQueue, clock, sent),
    });
  const firstScan = scanner(first).scanShard(0);
  await new Promise<void>((resolve) => setImmediate(resolve));
  await scanner(first === 'ahead' ? 'behind' : 'ahead').scanShard(0);
  secondDone.open();
  await firstScan;
  return sent;
}
