/**
 * The replica `cronfence dev` runs (lib/local/replica.ts): a worker runs the
 * handlers of the jobs module given with `--jobs` (load-jobs-module.ts says
 * how it is loaded); a scanner runs none.
 *
 *   node --import tsx lib/local/dev-replica.ts worker|scanner <id> [--jobs <module>]
 */
import { CronfenceError } from '../core/errors.ts';
import { HandlerRegistry } from '../engine/define-job.ts';
import { loadJobsModule } from './load-jobs-module.ts';
import { startReplica } from './replica.ts';

startReplica('dev-replica.ts', async ({ role, jobsModule }) => {
  if (jobsModule) return { handlers: (await loadJobsModule(jobsModule)).registry };
  if (role === 'worker') throw new CronfenceError('a dev worker needs --jobs <module>: the handlers it runs');
  return { handlers: new HandlerRegistry([]) };
});
