/**
 * The scheduler's clock: the tick and the scanner. Checked at synth so a
 * deployment cannot stop its own clock: each gets reserved concurrency by
 * default (a burst of workers, or any other function in the account, cannot
 * throttle the clock), the scanner's event source never invokes past that
 * reservation (a throttled scan message would wait out its queue's visibility),
 * and the scanner's timeout leaves a scan its budget plus the time to re-queue
 * the rest of its shard.
 */
import { Duration } from 'aws-cdk-lib';
import { InvalidSchedulerPropError } from '../core/errors.ts';
import type { CronSchedulerProps } from './props.ts';

/** The tick's reservation: one invocation a minute, EventBridge's retries of a failed one, a dead-man's check. */
export const DEFAULT_TICK_RESERVED_CONCURRENCY = 2;
/** What a scan may still do after its budget: finish the page in flight, re-queue the rest of its shard, flush its events. */
export const SCAN_WRAP_UP = Duration.seconds(10);
/** An SQS event source mapping's lowest maximum concurrency. */
const MIN_MAPPING_CONCURRENCY = 2;

export interface ClockConcurrency {
  /** Reserved concurrency of the tick; undefined for none. */
  readonly tick?: number;
  /** Reserved concurrency of the scanner; undefined for none. */
  readonly scanner?: number;
  /** Maximum concurrency of the scanner's event source mapping; undefined for none. */
  readonly scannerMapping?: number;
}

/**
 * @throws {InvalidSchedulerPropError} naming `tickReservedConcurrency`, `scannerReservedConcurrency` or
 * `scannerBatch.maxConcurrency` for a value the clock cannot run on.
 */
export function clockConcurrency(props: CronSchedulerProps, shardCount: number): ClockConcurrency {
  const tick = reservation('tickReservedConcurrency', props.tickReservedConcurrency, DEFAULT_TICK_RESERVED_CONCURRENCY, 1);
  // One scan message per shard each minute, all at once: each shard scanned in parallel.
  const scanner = reservation(
    'scannerReservedConcurrency',
    props.scannerReservedConcurrency,
    Math.max(MIN_MAPPING_CONCURRENCY, shardCount),
    MIN_MAPPING_CONCURRENCY,
  );
  const mapping = props.scannerBatch?.maxConcurrency;
  if (scanner !== undefined && mapping !== undefined && mapping > scanner) {
    throw new InvalidSchedulerPropError(
      'scannerBatch.maxConcurrency',
      mapping,
      `must be at most scannerReservedConcurrency (${scanner}): invocations past the reservation are throttled, and a throttled scan message waits out the scan queue's visibility`,
    );
  }
  return { tick, scanner, scannerMapping: mapping ?? scanner };
}

function reservation(field: string, value: number | false | undefined, fallback: number, minimum: number): number | undefined {
  if (value === false) return undefined;
  const reserved = value ?? fallback;
  if (!Number.isInteger(reserved) || reserved < minimum || reserved > 1000) {
    throw new InvalidSchedulerPropError(field, reserved, `must be a whole number from ${minimum} to 1000, or false for no reservation`);
  }
  return reserved;
}

/**
 * @throws {InvalidSchedulerPropError} naming `scannerTimeout` when Lambda would end a scan before it re-queued the
 * rest of its shard: the shard would wait for the scan queue's visibility (the timeout) or the next tick.
 */
export function checkScannerTimeout(timeout: Duration, scanBudgetMs: number): void {
  const minimum = Duration.millis(scanBudgetMs + SCAN_WRAP_UP.toMilliseconds());
  if (timeout.toMilliseconds() < minimum.toMilliseconds()) {
    throw new InvalidSchedulerPropError(
      'scannerTimeout',
      timeout.toHumanString(),
      `must be at least ${minimum.toHumanString()}: a scan runs for up to its ${Duration.millis(scanBudgetMs).toHumanString()} budget, then needs ${SCAN_WRAP_UP.toHumanString()} to finish its page and re-queue the rest of its shard`,
    );
  }
}
