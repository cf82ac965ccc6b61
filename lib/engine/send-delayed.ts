/**
 * Sends work messages so each surfaces at its start (its second, plus the
 * job's jitter offset), in the second before it or at or after it by the
 * job's start precision (core/start-precision.ts), with the delay computed as
 * each batch goes out: a long scan's later batches would otherwise surface
 * late by the time the scan had taken.
 */
import type { Clock } from '../core/clock.ts';
import { mapBounded } from '../core/map-bounded.ts';
import type { WorkQueue } from '../core/ports.ts';
import type { SliceKey } from '../core/slice.ts';
import { surfaceDelaySeconds, type StartPrecision } from '../core/start-precision.ts';

/** SQS's SendMessageBatch limit. */
const SEND_BATCH = 10;
/** Batches in flight at once: a burst bucket of a thousand jobs is a hundred batches, which workers should see start at once. */
const SEND_CONCURRENCY = 8;
/** SQS's longest DelaySeconds; a later start surfaces early and the worker hides it again until its second. */
const MAX_DELAY_SECONDS = 900;

/** A work message on its way: `startAt` when it is meant to start, if not its second. */
export interface OutgoingMessage extends SliceKey {
  readonly startAt?: number;
  /** The job generation it is sent for. */
  readonly generation?: number;
  /** The job's start precision (not part of the message): when in the second it surfaces. @default 'exact' */
  readonly startPrecision?: StartPrecision;
}

/** @returns how many were sent. */
export async function sendDelayed(queue: WorkQueue, clock: Clock, messages: readonly OutgoingMessage[]): Promise<number> {
  const batches: OutgoingMessage[][] = [];
  for (let i = 0; i < messages.length; i += SEND_BATCH) batches.push(messages.slice(i, i + SEND_BATCH));
  await mapBounded(batches, SEND_CONCURRENCY, async (batch) => {
    const now = clock.now();
    await queue.send(
      batch.map(({ startAt, startPrecision, ...message }) => ({
        ...message,
        delaySeconds: Math.min(MAX_DELAY_SECONDS, surfaceDelaySeconds(startAt ?? message.scheduledAt, now, startPrecision)),
      })),
    );
  });
  return messages.length;
}
