/**
 * What the repository adds to `cronfence dev` (`npm start`): the example
 * jobs when no `--jobs` is given (with their mock bank,
 * examples/jobs/dev-jobs.ts), and the request meter on every replica, whose
 * table of AWS requests per committed execution ends the summary.
 */
import { fileURLToPath } from 'node:url';
import { exampleDevJobs } from '../../examples/jobs/dev-jobs.ts';
import type { DevAdditions, DevSummary } from '../../lib/local/dev.ts';
import { table } from '../../lib/local/format.ts';
import { FleetMeters } from '../meter/replica-meter.ts';

const DEV_REPLICA = fileURLToPath(new URL('./dev-replica.ts', import.meta.url));

export function devAdditions(): DevAdditions {
  const meters = new FleetMeters();
  return {
    defaultJobs: exampleDevJobs,
    replicaEntry: DEV_REPLICA,
    onToolMessage: meters.onToolMessage,
    summaryLines: (summary) => requestTable(summary, meters.requests),
  };
}

/** AWS requests of all replicas, by service.Operation, per committed execution (none without one). */
export function requestTable(summary: DevSummary, requests: Readonly<Record<string, number>>): string[] {
  const executions = summary.events.committed ?? 0;
  if (executions === 0) return [];
  return [
    '',
    `AWS requests by all replicas (scanners and workers), per committed execution (${executions}):`,
    table([
      ['request', 'count', 'per execution'],
      ...Object.entries(requests)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, count]) => [name, count, (count / executions).toFixed(2)]),
    ]),
  ];
}
