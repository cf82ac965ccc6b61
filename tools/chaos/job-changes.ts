/**
 * The drill parent's changes of its jobs mid-drill, on one timeline and one
 * at a time: the `lifecycle` fault's changes through the JobRepository
 * (lifecycle-faults.ts) and the `poison` fault's bad rows and repairs
 * (poison-faults.ts). A poisoned job gets no lifecycle change until its
 * repair: an operator's change over a bad row would be a repair of its own.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { sleepUntil, type Clock } from '../../lib/core/clock.ts';
import { eventTime } from './observed.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { isFastSchedule } from './chaos-jobs.ts';
import type { FaultKind } from './config.ts';
import { readJobRecord } from './drill-stores.ts';
import type { ExpectedOccurrence } from './expected.ts';
import { planLifecycle } from './fault-plan.ts';
import type { HistoryVerdict } from './history.ts';
import type { JobHistoryBook } from './job-history.ts';
import { LifecycleInjector } from './lifecycle-faults.ts';
import { checkPoison, type PoisonVerdict } from './poison-checks.ts';
import { planPoison, PoisonInjector, type PoisonDeps } from './poison-faults.ts';
import { SeededRandom } from './random.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface JobChangeContext {
  readonly seed: number;
  readonly durationMs: number;
  readonly faults: ReadonlySet<FaultKind>;
  readonly clock: Clock;
  readonly startedAt: number;
  readonly runtime: Runtime;
  readonly specs: readonly (JobSpecInput & { id: string })[];
  readonly book: JobHistoryBook;
  readonly recorder: HistoryRecorder;
}

type Step = { readonly atMs: number; readonly run: () => Promise<void> };

/** Runs the planned lifecycle changes, poisonings and repairs in time order. @returns the poison injector (its poisonings), when `poison` is on. */
export async function changeJobs(context: JobChangeContext): Promise<PoisonInjector | undefined> {
  const { runtime, specs, book, recorder, faults } = context;
  const readRecord = (jobId: string): ReturnType<typeof readJobRecord> => readJobRecord(runtime, jobId);
  const lifecycle = new LifecycleInjector(
    { repository: runtime.jobs(), readRecord, book, random: new SeededRandom(context.seed + 2) },
    specs,
  );
  const poisoner = faults.has('poison')
    ? new PoisonInjector(
        {
          writeBadRow: badRowWriter(runtime),
          repository: runtime.jobs(),
          readRecord,
          specOf: (jobId) => lifecycle.spec(jobId),
          book,
          now: () => context.clock.now(),
        },
        specs.map((spec) => spec.id),
      )
    : undefined;
  const steps: Step[] = [];
  if (faults.has('lifecycle')) {
    const preferred = specs.flatMap((spec, index) => (isFastSchedule(spec.schedule) ? [index] : []));
    for (const change of planLifecycle({ seed: context.seed, durationMs: context.durationMs, jobCount: specs.length, preferred })) {
      const spec = specs[change.job];
      steps.push({
        atMs: change.atMs,
        run: async () => {
          if (spec && !poisoner?.isPoisoned(spec.id) && (await lifecycle.change(spec.id, change.choice))) recorder.faults.lifecycle++;
        },
      });
    }
  }
  for (const planned of poisoner ? planPoison({ seed: context.seed, durationMs: context.durationMs }) : []) {
    let victim: string | undefined;
    steps.push({
      atMs: planned.atMs,
      run: async () => {
        victim = await poisoner?.poison(planned.kind, planned.choice);
        if (victim !== undefined) recorder.faults.poison++;
      },
    });
    steps.push({ atMs: planned.repairAtMs, run: async () => void (victim !== undefined && (await poisoner?.repair(victim))) });
  }
  // Stable: a repair planned at the same instant as a poisoning stays after it.
  steps.sort((a, b) => a.atMs - b.atMs);
  for (const step of steps) {
    await sleepUntil(context.clock, context.startedAt + step.atMs);
    await step.run();
  }
  return poisoner;
}

/** The raw write a manual edit or a migration would make: the bad value, under the generation the drill recorded. */
export function badRowWriter(runtime: Runtime): PoisonDeps['writeBadRow'] {
  return async (jobId, generation, bad) => {
    await runtime.clients.dynamo.send(
      new UpdateItemCommand({
        TableName: runtime.config.jobsTable,
        Key: { jobId: { S: jobId } },
        UpdateExpression: 'SET #bad = :bad',
        ConditionExpression: '#generation = :generation',
        ExpressionAttributeNames: { '#bad': bad.attribute, '#generation': 'generation' },
        ExpressionAttributeValues: { ':bad': { S: bad.value }, ':generation': { N: String(generation) } },
      }),
    );
  };
}

/** The poison checks over what the drill left: the wheel's set-aside records of every shard, the `set_aside` events, the missed occurrences. */
export async function readPoisonVerdict(
  runtime: Runtime,
  poisoner: PoisonInjector,
  recorder: HistoryRecorder,
  expected: readonly ExpectedOccurrence[],
  verdict: HistoryVerdict,
): Promise<PoisonVerdict> {
  const shards = Array.from({ length: runtime.config.shardCount }, (_, shard) => shard);
  const setAside = (await Promise.all(shards.map((shard) => runtime.wheel.setAsideJobs(shard)))).flat();
  const setAsideEvents = recorder.events
    .filter((observed) => observed.event.type === 'set_aside')
    .map((observed) => ({ jobId: observed.event.jobId, at: eventTime(observed) }));
  const byKey = new Map(expected.map((occurrence) => [occurrence.executionKey, occurrence]));
  const missed = verdict.missed.map((key) => byKey.get(key) ?? { executionKey: key, jobId: '', scheduledAt: 0 });
  return checkPoison({ poisonings: poisoner.poisonings(), setAside, setAsideEvents, missed });
}
