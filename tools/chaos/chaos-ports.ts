/**
 * Port wrappers a chaos replica puts around its real ones: lost, duplicated,
 * replayed and delayed work messages, copies that arrive seconds after the
 * original (while its holder may still run it), and commits whose reply is
 * lost after DynamoDB applied them. Each injected fault is reported.
 */
import type { Claim } from '../../lib/core/claim.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { BusinessWrite, SliceStore, WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import type { FaultKind, ReplicaChaosConfig } from './config.ts';
import type { SeededRandom } from './random.ts';

/** `executionKey`: the slice a faulted request was about, when the request names one; `request`: an AWS request's command. */
export type FaultReporter = (fault: FaultKind, executionKey?: string, request?: string, jobIds?: readonly string[]) => void;

/** What a client sees when a request timed out after the server applied it. */
export class SimulatedTimeoutError extends Error {
  override name = 'TimeoutError';
}

/** A work message this replica sent (after SQS took it, with the delay it went with) or dropped as its fault. */
export interface SentWork {
  readonly executionKey: string;
  readonly delaySeconds: number;
  readonly dropped: boolean;
}

export function chaosWorkQueue(
  inner: WorkQueue,
  config: ReplicaChaosConfig,
  random: SeededRandom,
  report: FaultReporter,
  onSent?: (sent: SentWork) => void,
): WorkQueue {
  return {
    hide: (receiptHandle, seconds, signal) => inner.hide(receiptHandle, seconds, signal),
    hideBatched: (receiptHandle, seconds, signal) => inner.hideBatched(receiptHandle, seconds, signal),
    async send(messages) {
      const out: WorkMessage[] = [];
      const sent: SentWork[] = [];
      for (const message of messages) {
        const key = executionKey(message.jobId, message.scheduledAt);
        if (random.chance(config.dropRate)) {
          report('drop', key);
          onSent?.({ executionKey: key, delaySeconds: message.delaySeconds, dropped: true });
          continue;
        }
        let copy = message;
        if (random.chance(config.delayRate)) {
          report('delay', key);
          copy = { ...message, delaySeconds: message.delaySeconds + random.int(1, 5) };
        }
        out.push(copy);
        sent.push({ executionKey: key, delaySeconds: copy.delaySeconds, dropped: false });
        if (random.chance(config.duplicateRate)) {
          report('duplicate');
          for (let i = random.int(1, 2); i > 0; i--) out.push(copy);
        }
        if (random.chance(config.lateDuplicateRate ?? 0)) {
          // Lands on whichever (skewed) worker polls then: mid-run for a slow handler, after it for a fast one.
          report('lateDuplicate');
          out.push({ ...copy, delaySeconds: copy.delaySeconds + random.int(2, 6) });
        }
      }
      await inner.send(out);
      for (const work of sent) onSent?.(work);
      if (out.length > 0 && random.chance(config.replayRate)) {
        report('duplicate');
        await inner.send(out);
      }
    },
  };
}

export function chaosSliceStore(inner: SliceStore, config: ReplicaChaosConfig, random: SeededRandom, report: FaultReporter): SliceStore {
  return Object.assign(Object.create(inner) as SliceStore, {
    async commit(claim: Claim, now: number, writes: readonly BusinessWrite[]): Promise<void> {
      await inner.commit(claim, now, writes);
      if (random.chance(config.ambiguousCommitRate)) {
        report('ambiguousCommit');
        throw new SimulatedTimeoutError('commit reply lost (chaos): the write was applied');
      }
    },
  });
}
