/**
 * What the drill observed: events and renewals the replicas reported, the
 * process faults it injected, and the dead-letter queue's contents; and how
 * to put a replica's timestamps on the drill's clock (each is corrected by
 * that replica's known clock offset).
 */
import type { LifecycleEvent } from '../../lib/core/events.ts';
import type { ProcessFaultKind } from './fault-plan.ts';

export interface ObservedEvent {
  readonly replica: string;
  readonly offsetMs: number;
  readonly event: LifecycleEvent;
}

export interface ObservedRenewal {
  readonly replica: string;
  readonly offsetMs: number;
  readonly executionKey: string;
  readonly fence: number;
  /** By the replica's own (skewed) clock: read before the renewal was sent. */
  readonly at: number;
  /** This renewal disarmed the holder's-message-back takeover: a failover after it waits for the lease (held-message.ts). */
  readonly disarmed?: true;
  /** This renewal re-armed it: the holder knew its message stayed hidden throughout (held-message.ts). */
  readonly rearmed?: true;
}

export interface InjectedProcessFault {
  readonly kind: ProcessFaultKind;
  readonly replica: string;
  /** Drill time. */
  readonly at: number;
  /** Drill time a paused process was resumed. */
  readonly until?: number;
}

/** A chunk a worker committed, found committed by an earlier claim (and skipped), or had refused by the fence. */
export interface ObservedChunk {
  readonly replica: string;
  readonly executionKey: string;
  /** The fence of the attempt that reported it. */
  readonly fence: number;
  readonly chunk: number;
  readonly outcome: 'committed' | 'already-committed' | 'refused';
  /** Drill time the report arrived. */
  readonly at: number;
}

/**
 * A throttled or hung AWS request a replica's client injected, on the drill's clock (when the parent heard of it); in
 * the simulation also a request one of whose legs drew the profile's latency tail (`slow`, tools/sim/sim-network.ts).
 */
export interface InjectedClientFault {
  readonly kind: 'throttle' | 'hang' | 'slow';
  readonly replica: string;
  readonly at: number;
  /** The slice the request was about, when it named one (DynamoDB); SQS requests name none. */
  readonly executionKey?: string;
  /** The SDK command refused or hung, e.g. `UpdateItemCommand`. */
  readonly request: string;
  /** The jobs a request named by their own item, when it named no slice (a job read before a claim). */
  readonly jobIds?: readonly string[];
}

/** A worker's receive of a work message, on the drill's clock (when its report reached the drill). */
export interface ObservedReceive {
  readonly replica: string;
  readonly executionKey: string;
  readonly at: number;
  /** Which message (a copy has its own id) and which delivery of it (SQS's ApproximateReceiveCount). */
  readonly messageId?: string;
  readonly receiveCount?: number;
}

/** A work message a replica sent (scan, reconciler, sweep or retry) or dropped as its fault, on the drill's clock. */
export interface ObservedSend {
  readonly replica: string;
  readonly executionKey: string;
  readonly at: number;
  readonly delaySeconds: number;
  readonly dropped: boolean;
}

/** One record found on the dead-letter queue, by the slice it names. */
export interface DeadLetterEntry {
  readonly executionKey: string;
  /** `dead-slice` (a worker gave up), `unrunnable-message`, `malformed-message`, or `redriven` (SQS's maxReceiveCount). */
  readonly kind: string;
}

export const realTime = (observed: { offsetMs: number }, clockMs: number): number => clockMs - observed.offsetMs;
export const eventTime = (observed: ObservedEvent): number => realTime(observed, Date.parse(observed.event.at));

export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
