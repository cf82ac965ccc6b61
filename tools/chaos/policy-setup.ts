/**
 * The drill's set-up of its schedule-policy jobs (policy-jobs.ts): stored
 * beside the random ones, the misfire ones given their simulated outage, and
 * the outage's occurrences the checker expects (before the window).
 */
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import type { Clock } from '../../lib/core/clock.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { expectedOccurrences, type Enumerate } from './expected.ts';
import type { JobHistoryBook } from './job-history.ts';
import type { OutageJob } from './policy-checks.ts';
import { MISFIRE_JOBS, OUTAGE_MS, policyJobs } from './policy-jobs.ts';

export interface PolicySetup {
  readonly specs: readonly (JobSpecInput & { id: string })[];
  readonly outages: readonly OutageJob[];
}

/**
 * Stores the schedule-policy jobs (policy-jobs.ts) and gives the misfire ones their outage. A misfire job is put as of
 * OUTAGE_MS ago, without the scan request a change sends: its row and inbox entry are written due from then in one
 * change, as a scanner outage leaves them, so no scan can come between the put and the outage (when the outage was a
 * second write, a scan an earlier put had asked for took the generation up in between, and the outage's occurrences
 * were never planned: seen in CI and in drill seed 2911).
 */
export async function setUpPolicyJobs(runtime: Runtime, book: JobHistoryBook, now: number): Promise<PolicySetup> {
  const specs = policyJobs(now);
  const outages: OutageJob[] = [];
  const beforeOutage = dynamoJobRepository(runtime.clients.dynamo, runtime.config, clockBehind(runtime.clock, OUTAGE_MS), {
    random: runtime.random,
  });
  for (const spec of specs) {
    const misfire = MISFIRE_JOBS.find((entry) => entry.id === spec.id)?.misfire;
    const simulatedAt = runtime.clock.now();
    const { job } = await (misfire === undefined ? runtime.jobs() : beforeOutage).put(spec);
    book.record('create', job);
    if (misfire === undefined) continue;
    outages.push({
      jobId: spec.id,
      misfire,
      outageFrom: job.nextFireAt,
      simulatedAt,
      definition: { schedule: job.schedule, timeZone: job.timeZone, dst: job.dst, enabled: true },
    });
  }
  return { specs, outages };
}

/** `clock`, its instant `behindMs` earlier. */
function clockBehind(clock: Clock, behindMs: number): Clock {
  return {
    now: () => clock.now() - behindMs,
    elapsed: () => clock.elapsed(),
    sleep: (ms, signal) => clock.sleep(ms, signal),
    timeout: (ms) => clock.timeout(ms),
  };
}

/** The outage's occurrences of the misfire jobs (before the window): each must end as its policy says. */
export function outageOccurrences(
  outages: readonly OutageJob[],
  startedAt: number,
  enumerate: Enumerate,
): ReturnType<typeof expectedOccurrences> {
  const histories = outages.map((outage) => ({
    jobId: outage.jobId,
    changes: [{ kind: 'create' as const, at: outage.outageFrom, generation: 1, definition: outage.definition }],
  }));
  return expectedOccurrences(histories, 0, startedAt, enumerate);
}
