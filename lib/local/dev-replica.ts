/**
 * The replica `cronfence dev` runs (lib/local/replica.ts): a worker runs the
 * handlers of the jobs module given with `--jobs` (a user's `cronfence dev
 * --jobs`), else the example handlers. The module is loaded by this build's
 * own module system (`require` in the CommonJS build, which the fleet picks
 * for a CommonJS module; `import` otherwise), so the module and the engine
 * share one copy of cronfence.
 *
 *   node --import tsx lib/local/dev-replica.ts worker|scanner <id> [--jobs <module>]
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { registry as exampleRegistry } from '../../examples/jobs/index.ts';
import { jobsFromModule, type JobsModuleExports } from '../lambda/jobs-module.ts';
import { BUILD } from '../package/package-files.ts';
import { startReplica } from './replica.ts';

startReplica('dev-replica.ts', async ({ jobsModule }) => ({
  handlers: jobsModule ? jobsFromModule(await loadModule(jobsModule), jobsModule).registry : exampleRegistry,
}));

/** `require` in the CommonJS build (tsx's loader, from the fork's --import, handles .ts there too), `import` otherwise. */
async function loadModule(file: string): Promise<JobsModuleExports> {
  const absolute = path.resolve(file);
  if (BUILD === 'cjs') return createRequire(import.meta.url)(absolute) as JobsModuleExports;
  return (await import(pathToFileURL(absolute).href)) as JobsModuleExports;
}
