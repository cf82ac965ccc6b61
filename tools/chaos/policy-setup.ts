/**
 * The drill's set-up of its schedule-policy jobs (policy-jobs.ts): stored
 * beside the random ones, the misfire ones given their simulated outage, and
 * the outage's occurrences the checker expects (before the window).
 */
import { dynamoJobRepository } from '../../lib/aws/job-repository-wiring.ts';
import type { JobSpecInput } from '../../lib/core/job-spec.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { simulateOutage } from './drill-stores.ts';
import { expectedOccurrences, type Enumerate } from './expected.ts';
import type { JobHistoryBook } from './job-history.ts';
import type { OutageJob } from './policy-checks.ts';
import { MISFIRE_JOBS, OUTAGE_MS, policyJobs } from './policy-jobs.ts';

export interface PolicySetup {
  readonly specs: readonly (JobSpecInput & { id: string })[];
  readonly outages: readonly OutageJob[];
}

/** Stores the schedule-policy jobs (policy-jobs.ts) and gives the misfire ones their outage. */
export async function setUpPolicyJobs(runtime: Runtime, book: JobHistoryBook, now: number): Promise<PolicySetup> {
  const specs = policyJobs(now);
  const outages: OutageJob[] = [];
  // The misfire jobs are put without the scan request a change sends: a scan it started could take their generation
  // up from the inbox before simulateOutage moves it back, and the outage would not happen.
  const quiet = dynamoJobRepository(runtime.clients.dynamo, runtime.config, runtime.clock, { random: runtime.random });
  for (const spec of specs) {
    const misfire = MISFIRE_JOBS.find((entry) => entry.id === spec.id)?.misfire;
    const { job } = await (misfire === undefined ? runtime.jobs() : quiet).put(spec);
    book.record('create', job);
    if (misfire === undefined) continue;
    const simulatedAt = runtime.clock.now();
    const outageFrom = await simulateOutage(runtime, spec.id, OUTAGE_MS);
    outages.push({
      jobId: spec.id,
      misfire,
      outageFrom,
      simulatedAt,
      definition: { schedule: job.schedule, timeZone: job.timeZone, dst: job.dst, enabled: true },
    });
  }
  return { specs, outages };
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
