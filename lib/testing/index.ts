/**
 * `cronfence/testing`: run your jobs module's handlers in your own tests
 * (vitest or jest) through the real claim, lease and commit path, on the
 * bundled emulator (or AWS_ENDPOINT_URL).
 *
 * ```ts
 * import { startCronfenceTest } from 'cronfence/testing';
 * import * as jobs from '../src/cron-jobs';
 *
 * const cron = await startCronfenceTest({ jobs });
 * const run = await cron.runSlice('merchant-settlement');
 * expect(run.outcome).toBe('committed');
 * await cron.stop();
 * ```
 */
export { CronfenceTest, startCronfenceTest, type CronfenceTestOptions } from './cronfence-test.ts';
export type { AttemptReport, RunSliceOptions, SliceRun, TakeoverOptions, TakeoverRun } from './run-slice.ts';
export type { CommitRecord, HandlerEnd } from './observe.ts';
export type { OutboxItem } from '../core/chunks.ts';
export type { LocalTable } from '../lambda/jobs-module.ts';
export { EmulatorSetupError, EmulatorStartError } from '../local/emulator.ts';
