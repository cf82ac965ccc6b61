/**
 * The `poison` fault: at seeded moments the drill writes a bad row under one
 * of its every-few-seconds jobs, straight into the jobs table through the
 * raw DynamoDB client (a manual edit, a migration, a library upgrade would:
 * a schedule or time zone that no longer parses, a field of the wrong type),
 * and later repairs it as an operator would, with a put of the job's good
 * definition through the JobRepository (a change: a new generation). The
 * scans must set the bad generation aside and go on with every other job
 * (docs/architecture/jobs.md, "A job set aside"); the checks are in
 * poison-checks.ts.
 *
 * Only the drill's plain every-few-seconds jobs are poisoned: a scan meets
 * such a job within seconds of the poisoning (the lookahead plus one period),
 * so its setting aside is certain inside the poisoned spell. The schedule
 * policy jobs and the settlement are left alone: their own checks expect
 * each of their occurrences exactly.
 */
import { isEverySeconds } from './chaos-jobs.ts';
import type { JobRecord } from '../../lib/core/job-record.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { JobHistoryBook } from './job-history.ts';
import { SeededRandom } from './random.ts';

/** What is wrong with a poisoned row. */
export const POISON_KINDS = ['schedule', 'timeZone', 'enabled'] as const;
export type PoisonKind = (typeof POISON_KINDS)[number];

/** The bad value each kind writes: a cron that does not parse, a zone that does not exist, a boolean stored as a string. */
export const BAD_VALUES: Record<PoisonKind, { readonly attribute: string; readonly value: string }> = {
  schedule: { attribute: 'schedule', value: 'every tuesday-ish' },
  timeZone: { attribute: 'timeZone', value: 'Mars/Olympus_Mons' },
  enabled: { attribute: 'enabled', value: 'yes' },
};

export interface PlannedPoisoning {
  /** Milliseconds after the drill starts. */
  readonly atMs: number;
  /** When the drill repairs it. */
  readonly repairAtMs: number;
  readonly kind: PoisonKind;
  /** Uniform in [0, 1): picks the victim among the jobs that may be poisoned then. */
  readonly choice: number;
}

const POISON_WARMUP_MS = 8000;
/** Poisoned at least this long: a scan meets an every-few-seconds job within the lookahead (20 s) plus a period and a tick. */
export const MIN_POISONED_MS = 30_000;
const MAX_POISONED_MS = 60_000;
/** The repair this long before the end at least: the repaired definition has occurrences in the window. */
const REPAIR_QUIET_TAIL_MS = 12_000;

/** Two poisonings a minute-long drill, one more a minute, five at most; none when the window cannot hold a poisoned spell and its repair. */
export function planPoison(options: { readonly seed: number; readonly durationMs: number }): PlannedPoisoning[] {
  const latestStart = options.durationMs - REPAIR_QUIET_TAIL_MS - MIN_POISONED_MS;
  if (latestStart < POISON_WARMUP_MS) return [];
  const random = new SeededRandom(options.seed * 15_485_863 + 29);
  const count = Math.min(5, Math.max(2, Math.floor(options.durationMs / 60_000) + 1));
  const plan: PlannedPoisoning[] = [];
  for (let i = 0; i < count; i++) {
    const atMs = random.int(POISON_WARMUP_MS, latestStart);
    const repairAtMs = atMs + random.int(MIN_POISONED_MS, Math.min(MAX_POISONED_MS, options.durationMs - REPAIR_QUIET_TAIL_MS - atMs));
    plan.push({ atMs, repairAtMs, kind: random.pick(POISON_KINDS), choice: random.next() });
  }
  return plan.sort((a, b) => a.atMs - b.atMs);
}

/** One poisoning, as it happened. */
export interface Poisoning {
  readonly jobId: string;
  readonly kind: PoisonKind;
  /** The generation the bad row was written under (the one the scans must set aside). */
  readonly generation: number;
  /** Drill time, just before the bad row was written. */
  readonly at: number;
  /** Drill time the repair took effect (its new generation's updatedAt); undefined if it never landed. */
  readonly repairedAt?: number;
  readonly repairedGeneration?: number;
}

export interface PoisonDeps {
  /** Writes the bad value under the job, only if it still has `generation` (a raw UpdateItem). */
  readonly writeBadRow: (jobId: string, generation: number, bad: (typeof BAD_VALUES)[PoisonKind]) => Promise<void>;
  readonly repository: { put(input: unknown): Promise<unknown> };
  /** The job's item as stored, read consistently. */
  readonly readRecord: (jobId: string) => Promise<JobRecord | undefined>;
  /** The job's good definition now (the last one the drill put). */
  readonly specOf: (jobId: string) => (JobSpecInput & { id: string }) | undefined;
  readonly book: JobHistoryBook;
  readonly now: () => number;
  readonly onError?: (error: unknown, context: string) => void;
}

const REPAIR_TRIES = 3;

export class PoisonInjector {
  private readonly live = new Map<string, Poisoning>();
  private readonly done: Poisoning[] = [];

  constructor(
    private readonly deps: PoisonDeps,
    private readonly jobIds: readonly string[],
  ) {}

  /** Is the job poisoned now (no other change may touch it until its repair)? */
  isPoisoned(jobId: string): boolean {
    return this.live.has(jobId);
  }

  /** Every poisoning so far, repaired or not. */
  poisonings(): Poisoning[] {
    return [...this.done, ...this.live.values()];
  }

  /**
   * Poisons one enabled every-few-seconds job not already poisoned, picked by
   * `choice`. @returns its id, or undefined when none was eligible or the write did not land.
   */
  async poison(kind: PoisonKind, choice: number): Promise<string | undefined> {
    const { book } = this.deps;
    const eligible = this.jobIds.filter((id) => {
      const definition = book.current(id)?.definition;
      return definition?.enabled === true && isEverySeconds(definition.schedule) && !this.live.has(id);
    });
    const jobId = eligible[Math.min(eligible.length - 1, Math.floor(choice * eligible.length))];
    const generation = jobId === undefined ? undefined : book.current(jobId)?.generation;
    if (jobId === undefined || generation === undefined) return undefined;
    const at = this.deps.now();
    try {
      await this.deps.writeBadRow(jobId, generation, BAD_VALUES[kind]);
    } catch (error) {
      this.deps.onError?.(error, `poison ${kind} of ${jobId}`);
    }
    const stored = await this.deps.readRecord(jobId);
    const landed =
      stored !== undefined &&
      !('deleted' in stored && stored.deleted) &&
      stored.generation === generation &&
      String((stored as unknown as Record<string, unknown>)[BAD_VALUES[kind].attribute]) === BAD_VALUES[kind].value;
    if (!landed || !book.poisoned(jobId, at)) return undefined;
    this.live.set(jobId, { jobId, kind, generation, at });
    return jobId;
  }

  /** Repairs the poisoning of `jobId` with a put of its good definition (a new generation). @returns whether it landed. */
  async repair(jobId: string): Promise<boolean> {
    const poisoning = this.live.get(jobId);
    const spec = this.deps.specOf(jobId);
    if (!poisoning || !spec) return false;
    for (let attempt = 1; attempt <= REPAIR_TRIES; attempt++) {
      try {
        await this.deps.repository.put({ ...spec, enabled: true });
      } catch (error) {
        // A call that failed may still have written: the item read back decides.
        this.deps.onError?.(error, `repair of ${jobId}`);
      }
      const record = await this.deps.readRecord(jobId);
      if (record && record.generation > poisoning.generation && this.deps.book.record('repair', record)) {
        this.live.delete(jobId);
        this.done.push({ ...poisoning, repairedAt: record.updatedAt, repairedGeneration: record.generation });
        return true;
      }
    }
    return false;
  }
}
