/**
 * Loads a jobs module the way a dev replica must: by this build's own module
 * system (`require` in the CommonJS build, which the fleet picks for a
 * CommonJS module; `import` otherwise), so the module and the engine share
 * one copy of cronfence. tsx's loader, from the fork's --import, handles .ts.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { jobsFromModule, type JobsModule, type JobsModuleExports } from '../lambda/jobs-module.ts';
import { BUILD } from '../package/package-files.ts';

export async function loadJobsModule(file: string): Promise<JobsModule> {
  const absolute = path.resolve(file);
  const exports =
    BUILD === 'cjs'
      ? (createRequire(import.meta.url)(absolute) as JobsModuleExports)
      : ((await import(pathToFileURL(absolute).href)) as JobsModuleExports);
  return jobsFromModule(exports, file);
}
