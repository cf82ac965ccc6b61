/**
 * What a replica process and its parent (lib/local/fleet.ts) say to each
 * other over the IPC channel: one discriminated union each way, so that the
 * parent switches on `kind` with the compiler checking every case, and no
 * report travels as log text. The repository's tools add kinds of their own
 * (`tools:…`, e.g. the request meter's snapshots): typed on their side, passed
 * through here as ToolMessage.
 */
import type { LifecycleEvent } from '../core/events.ts';
import type { ScanReport } from '../engine/scanner.ts';

export type ReplicaRole = 'scanner' | 'worker';

/** Replica -> parent. */
export type ReplicaMessage =
  /** Its poller is about to start. */
  | { readonly kind: 'ready'; readonly role: ReplicaRole; readonly id: string }
  /** A lifecycle event of the engine (the replica's entry may leave some out). */
  | { readonly kind: 'event'; readonly event: LifecycleEvent }
  /** A scanner finished one scan of a shard; `at` is its clock then. */
  | { readonly kind: 'scan'; readonly report: ScanReport; readonly at: number }
  /** The chaos replica injected a fault into itself (into a request for this slice, when it knows one). */
  | {
      readonly kind: 'fault';
      readonly fault: string;
      readonly executionKey?: string;
      readonly request?: string;
      /** The jobs a request read or wrote by their own item (a job read before a claim), when it named no slice. */
      readonly jobIds?: readonly string[];
    }
  /** A chaos worker received a work message for this slice (the drill times a takeover's receive). */
  | { readonly kind: 'received'; readonly executionKey: string; readonly messageId: string; readonly receiveCount: number }
  /** A chaos replica sent a work message for this slice (`delaySeconds`), or dropped it as its fault (the drill traces a lost occurrence). */
  | { readonly kind: 'sent'; readonly executionKey: string; readonly delaySeconds: number; readonly dropped: boolean }
  /** A worker renewed a lease (the chaos drill checks renewals against fences), and whether that renewal disarmed or re-armed the fast takeover. */
  | {
      readonly kind: 'renewed';
      readonly executionKey: string;
      readonly fence: number;
      readonly at: number;
      readonly disarmed?: true;
      readonly rearmed?: true;
    }
  /** A worker's chunked commit (`ctx.commitChunk`): committed, skipped as an earlier claim's, or refused by the fence. */
  | {
      readonly kind: 'chunk';
      readonly executionKey: string;
      readonly fence: number;
      readonly chunk: number;
      readonly outcome: 'committed' | 'already-committed' | 'refused';
      readonly at: number;
    }
  /** A tool's own message (its kind names the tool), handed to the fleet's owner as it is. */
  | ToolMessage;

/** Either way, a message of a tool attached to the replicas (tools/meter); the fleet passes it on unread. */
export interface ToolMessage {
  readonly kind: `tools:${string}`;
}

/** Parent -> replica: only tools ask replicas for anything. */
export type ParentMessage = ToolMessage;

/** The messages the fleet hands to its owner as they come (fault, receive, send, renewal and chunk reports). */
export type ReplicaReport = Extract<ReplicaMessage, { kind: 'fault' | 'received' | 'sent' | 'renewed' | 'chunk' }>;
