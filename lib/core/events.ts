/**
 * Lifecycle events: the engine's one way of saying what happened. Logs, the
 * EventBridge bus, the `--json` CLI output and tests all subscribe to these;
 * nothing parses log text.
 *
 * The `--json` line format is a documented interface (docs/events.md): keep
 * fields additive.
 */
import { executionKey, isoInstant } from './execution-key.ts';

export const LIFECYCLE_EVENT_TYPES = [
  'claimed',
  'started',
  'committed',
  'failed',
  'dead',
  'fenced_out',
  'missed',
  'skipped',
  /** The dead-man's switch: a job with no final slot within k of its intervals (lib/core/dead-man.ts). */
  'stale',
  /** Went back to wait behind a run of its job (overlap policy bufferOne / bufferAll); `retryAt`: when it is judged again. */
  'buffered',
  /**
   * A scan set the job aside (core/set-aside.ts): its stored row cannot be planned or sent; `reason` says why, and
   * `scheduledAt` is its first occurrence not sent. No scan sends it again until a change gives it a new generation.
   */
  'set_aside',
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

export interface LifecycleEvent {
  readonly type: LifecycleEventType;
  readonly jobId: string;
  /** ISO 8601 UTC, second precision (millisecond for an operator's triggered slot, core/operator.ts). */
  readonly scheduledAt: string;
  readonly executionKey: string;
  readonly fence: number;
  /** The worker (or scanner, for `missed`) that saw it. */
  readonly worker: string;
  /** ISO 8601 UTC, millisecond precision, by the emitting process's clock. */
  readonly at: string;
  readonly attempt?: number;
  /** `claimed`: true when this claim took the slice over from a holder whose lease lapsed (a failover). */
  readonly takeover?: boolean;
  /** `claimed`: from the message's processing start to the claim's answer (a slow claim delays the start and the first renewal). */
  readonly claimMs?: number;
  /** `started`: handler start minus its intended start (the scheduled time plus the job's jitter offset). */
  readonly startLagMs?: number;
  /** `committed`, `failed`: handler run time. */
  readonly durationMs?: number;
  /** `failed`: when the retry is due (ISO). */
  readonly retryAt?: string;
  /** `missed`, `skipped`: how many occurrences this event stands for (from `scheduledAt` on). */
  readonly count?: number;
  /** `missed`, `skipped` for a range: the range's exclusive end (ISO, second precision). */
  readonly until?: string;
  /** `skipped`: why (paused, disabled, deleted, superseded, misfire, overlap); `set_aside`: what is wrong with the stored row. */
  readonly reason?: string;
  /**
   * `claimed`: the claim returned when its message may already have surfaced again, so a standby may take it
   * over before its first renewal; the handler starts only after that renewal holds (docs/architecture.md).
   */
  readonly overtakeable?: boolean;
  readonly error?: string;
  /** `stale`: since when the job has had no final slot (its last one, or since it became active), ISO. */
  readonly silentSince?: string;
  /** `stale`: when a final slot was due at the latest, ISO. */
  readonly deadline?: string;
  /** `stale`: the schedule's interval the deadline was computed from. */
  readonly intervalMs?: number;
}

export interface EventSink {
  emit(event: LifecycleEvent): void;
}

export type LifecycleEventDetails = Omit<LifecycleEvent, 'type' | 'jobId' | 'scheduledAt' | 'executionKey' | 'at'>;

export function lifecycleEvent(
  type: LifecycleEventType,
  slice: { jobId: string; scheduledAt: number },
  at: number,
  details: LifecycleEventDetails,
): LifecycleEvent {
  return {
    type,
    jobId: slice.jobId,
    scheduledAt: isoInstant(slice.scheduledAt),
    executionKey: executionKey(slice.jobId, slice.scheduledAt),
    at: new Date(at).toISOString(),
    ...details,
  };
}

/** Sends each event to every sink; a failing sink never stops the others or the engine. */
export class FanOutEventSink implements EventSink {
  private readonly sinks: EventSink[];

  constructor(...sinks: EventSink[]) {
    this.sinks = sinks;
  }

  add(sink: EventSink): void {
    this.sinks.push(sink);
  }

  emit(event: LifecycleEvent): void {
    for (const sink of this.sinks) {
      try {
        sink.emit(event);
      } catch {
        // An observer's bug must not change an execution's outcome.
      }
    }
  }
}

/** Keeps events in memory; for tests and reports. */
export class RecordingEventSink implements EventSink {
  readonly events: LifecycleEvent[] = [];

  emit(event: LifecycleEvent): void {
    this.events.push(event);
  }

  ofType(type: LifecycleEventType): LifecycleEvent[] {
    return this.events.filter((e) => e.type === type);
  }
}
