/**
 * Inputs from outside the engine, in the simulation: job rows poisoned by a
 * raw write and repaired by a put, as the drill's `poison` fault does
 * (tools/chaos/poison-faults.ts), and forged or garbled work messages
 * (forged-messages.ts). Both arrive at seeded moments; their checks run on
 * what the stores hold at the end.
 */
import { isTombstone, type JobRecord } from '../../lib/core/job-record.ts';
import type { MemoryInstallation } from '../../lib/memory/index.ts';
import type { Enumerate, ExpectedOccurrence } from '../chaos/expected.ts';
import type { HistoryVerdict } from '../chaos/history.ts';
import type { JobHistoryBook } from '../chaos/job-history.ts';
import { eventTime, type ObservedEvent } from '../chaos/observed.ts';
import { checkPoison, poisonViolations, type PoisonVerdict } from '../chaos/poison-checks.ts';
import { planPoison, PoisonInjector } from '../chaos/poison-faults.ts';
import { checkForgeries, forgeryViolations, ForgeryInjector, planForgeries, type ForgeryVerdict } from './forged-messages.ts';

export interface InputFaultsVerdict {
  readonly poison: PoisonVerdict;
  readonly forgeries: ForgeryVerdict;
  /** Broken invariants, in words: empty when both held. */
  readonly violations: string[];
}

export interface InputFaultsContext {
  readonly seed: number;
  readonly durationMs: number;
  readonly shards: number;
  readonly install: MemoryInstallation;
  readonly book: JobHistoryBook;
  readonly jobIds: readonly string[];
  /** The jobs a poisoning may pick: a scan must meet each within its poisoned spell, so each runs every few seconds throughout. */
  readonly poisonable: readonly string[];
  readonly enumerate: Enumerate;
  readonly now: () => number;
  /** The good definition the simulation last put for a job (the repair puts it back). */
  readonly specOf: ConstructorParameters<typeof PoisonInjector>[0]['specOf'];
  readonly onError: (error: unknown, where: string) => void;
}

export class InputFaults {
  private readonly poisoner: PoisonInjector;
  private readonly forger: ForgeryInjector;

  constructor(private readonly context: InputFaultsContext) {
    const { install, book } = context;
    this.poisoner = new PoisonInjector(
      {
        writeBadRow: async (jobId, generation, bad) => {
          const record = install.tables.jobs.get(jobId);
          // The drill's raw UpdateItem has the same condition: the generation it recorded.
          if (record === undefined || isTombstone(record) || record.generation !== generation)
            throw new Error(`poisoning ${jobId}: generation ${generation} is no longer stored`);
          install.tables.jobs.set(jobId, { ...record, [bad.attribute]: bad.value } as JobRecord);
        },
        repository: install.jobs(),
        readRecord: async (jobId) => structuredClone(install.tables.jobs.get(jobId)),
        specOf: context.specOf,
        book,
        now: context.now,
        onError: context.onError,
      },
      context.poisonable,
    );
    this.forger = new ForgeryInjector(
      {
        sendBody: (body) => install.workQueue.sendBody(body),
        book,
        jobIds: context.jobIds,
        enumerate: context.enumerate,
        now: context.now,
      },
      context.seed,
    );
  }

  /** Schedules every poisoning, repair and forgery of the seed through `at` (milliseconds from the start). */
  plan(at: (ms: number, action: () => Promise<void>) => void): void {
    const { seed, durationMs } = this.context;
    for (const planned of planPoison({ seed, durationMs })) {
      let victim: string | undefined;
      at(planned.atMs, async () => void (victim = await this.poisoner.poison(planned.kind, planned.choice)));
      at(planned.repairAtMs, async () => void (victim !== undefined && (await this.poisoner.repair(victim))));
    }
    for (const planned of planForgeries({ seed, durationMs })) at(planned.atMs, async () => void (await this.forger.forge(planned.kind)));
  }

  /** A poisoned job takes no other change until its repair (an operator's change over a bad row would be a repair). */
  isPoisoned(jobId: string): boolean {
    return this.poisoner.isPoisoned(jobId);
  }

  /**
   * The poison and forgery checks; `verdict.missed` comes back without the poisoned jobs' own occurrences that met
   * their bad row (poison-checks.ts).
   */
  async check(
    verdict: HistoryVerdict,
    expected: readonly ExpectedOccurrence[],
    events: readonly ObservedEvent[],
    lastStartedAt: ReadonlyMap<string, number>,
    onRecord: ReadonlySet<string>,
  ): Promise<{ verdict: HistoryVerdict; inputs: InputFaultsVerdict }> {
    const { install } = this.context;
    const shards = Array.from({ length: this.context.shards }, (_, shard) => shard);
    const setAside = (await Promise.all(shards.map((shard) => install.wheel.setAsideJobs(shard)))).flat();
    const byKey = new Map(expected.map((occurrence) => [occurrence.executionKey, occurrence]));
    const poison = checkPoison({
      poisonings: this.poisoner.poisonings(),
      setAside,
      setAsideEvents: events
        .filter((observed) => observed.event.type === 'set_aside')
        .map((observed) => ({ jobId: observed.event.jobId, at: eventTime(observed) })),
      missed: verdict.missed.map((key) => byKey.get(key) ?? { executionKey: key, jobId: '', scheduledAt: 0 }),
    });
    const forgeries = checkForgeries({
      forgeries: this.forger.forgeries(),
      rejected: install.deadLetters.rejected,
      stillQueued: install.workQueue.bodies(),
      lastStartedAt,
      onRecord,
      expected: new Set(byKey.keys()),
      changedAfter: (jobId, at) =>
        this.context.book.histories().some((history) => history.jobId === jobId && history.changes.some((change) => change.at > at)),
    });
    return {
      verdict: { ...verdict, missed: poison.missed },
      inputs: { poison, forgeries, violations: [...poisonViolations(poison), ...forgeryViolations(forgeries)] },
    };
  }
}
