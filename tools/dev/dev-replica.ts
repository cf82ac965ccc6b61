/**
 * The replica the repository's `cronfence dev` (`npm start`, dev-additions.ts)
 * forks: a worker runs the jobs module given with `--jobs`, else the example
 * handlers; every replica carries the request meter.
 *
 *   node --import tsx tools/dev/dev-replica.ts worker|scanner <id> [--jobs <module>]
 */
import { registry as exampleRegistry } from '../../examples/jobs/index.ts';
import { loadJobsModule } from '../../lib/local/load-jobs-module.ts';
import { startReplica } from '../../lib/local/replica.ts';
import { attachMeter } from '../meter/replica-meter.ts';

startReplica('tools/dev/dev-replica.ts', async ({ jobsModule }) => ({
  handlers: jobsModule ? (await loadJobsModule(jobsModule)).registry : exampleRegistry,
  attach: attachMeter,
}));
