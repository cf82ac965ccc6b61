/**
 * The `lifecycle` fault: the drill parent changes random jobs mid-drill
 * through the JobRepository, as an operator or a deploy would: pause,
 * resume, put with a new schedule or payload, disable and re-enable by put,
 * delete and re-add. After each call it reads the job's item back and
 * records the change with the instant it took effect (the repository's own
 * `now`: StoredJob.updatedAt, or the tombstone's), so the checker's expected
 * occurrences follow the job's history (expected.ts).
 */
import type { JobRecord } from '../../lib/core/job-record.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import { otherSchedule } from './chaos-jobs.ts';
import type { JobChangeKind, JobHistoryBook } from './job-history.ts';
import type { SeededRandom } from './random.ts';

/** The repository calls the injector makes (JobRepository has them). */
export interface LifecycleRepository {
  put(input: unknown): Promise<unknown>;
  pause(id: string): Promise<unknown>;
  resume(id: string): Promise<unknown>;
  delete(id: string): Promise<unknown>;
}

export interface LifecycleDeps {
  readonly repository: LifecycleRepository;
  /** The job's item as stored (a tombstone included), read consistently. */
  readonly readRecord: (jobId: string) => Promise<JobRecord | undefined>;
  readonly book: JobHistoryBook;
  readonly random: SeededRandom;
  readonly onError?: (error: unknown, context: string) => void;
}

/** What may be done to a job in each state. */
const WHEN_ENABLED: readonly JobChangeKind[] = ['pause', 'schedule', 'payload', 'disable', 'delete'];
const WHEN_DISABLED: readonly JobChangeKind[] = ['resume', 'enable', 'delete'];

export function chooseChange(state: 'enabled' | 'disabled' | 'deleted', choice: number): JobChangeKind {
  if (state === 'deleted') return 'readd';
  const options = state === 'enabled' ? WHEN_ENABLED : WHEN_DISABLED;
  return options[Math.min(options.length - 1, Math.floor(choice * options.length))] as JobChangeKind;
}

export class LifecycleInjector {
  private readonly specs = new Map<string, JobSpecInput & { id: string }>();
  private revision = 0;

  constructor(
    private readonly deps: LifecycleDeps,
    specs: readonly (JobSpecInput & { id: string })[],
  ) {
    for (const spec of specs) this.specs.set(spec.id, spec);
  }

  /** The definition the drill last put for the job (its good one). */
  spec(jobId: string): (JobSpecInput & { id: string }) | undefined {
    return this.specs.get(jobId);
  }

  /** Changes job `jobId`; @returns the change recorded, or undefined when the call changed nothing. */
  async change(jobId: string, choice: number): Promise<JobChangeKind | undefined> {
    const current = this.deps.book.current(jobId);
    const state = !current?.definition ? 'deleted' : current.definition.enabled ? 'enabled' : 'disabled';
    const kind = chooseChange(state, choice);
    try {
      await this.apply(kind, jobId);
    } catch (error) {
      // A call that failed may still have written (the settle failed after the put): the item read back decides.
      this.deps.onError?.(error, `lifecycle ${kind} of ${jobId}`);
    }
    return this.deps.book.record(kind, await this.deps.readRecord(jobId)) ? kind : undefined;
  }

  private async apply(kind: JobChangeKind, jobId: string): Promise<void> {
    const { repository } = this.deps;
    const spec = this.specs.get(jobId);
    if (!spec) throw new RangeError(`unknown drill job ${JSON.stringify(jobId)}`);
    const put = async (next: JobSpecInput & { id: string }): Promise<void> => {
      this.specs.set(jobId, next);
      await repository.put(next);
    };
    switch (kind) {
      case 'pause':
        await repository.pause(jobId);
        return;
      case 'resume':
        await repository.resume(jobId);
        return;
      case 'delete':
        await repository.delete(jobId);
        return;
      case 'schedule':
        return put({ ...spec, enabled: true, schedule: otherSchedule(spec.schedule, this.deps.random) });
      case 'payload':
        return put({ ...spec, enabled: true, payload: { rev: ++this.revision } });
      case 'disable':
        return put({ ...spec, enabled: false });
      case 'enable':
      case 'readd':
      case 'create':
        return put({ ...spec, enabled: true });
    }
  }
}
