/**
 * What a jobs module exports, read synchronously in a child process, so that
 * `cdk synth` (any module system, any test runner: jest, vitest, tsx), the CLI
 * and `cronfence dev` read a module the same way and none of them needs a
 * TypeScript loader of its own: the child runs under tsx's loader, as the
 * `cronfence dev` replicas do.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JobSpecInput } from '../core/job-spec.ts';
import { BUILD, packageFile } from './package-files.ts';
import { InvalidJobsModuleError, type LocalTable } from '../lambda/jobs-module.ts';

export interface JobsModuleDescription {
  /** The module's absolute path. */
  readonly path: string;
  readonly handlers: readonly string[];
  readonly schedules: readonly JobSpecInput[];
  readonly tables: readonly LocalTable[];
}

/** Loading a module runs its top level; one that takes this long is stuck. */
const DESCRIBE_TIMEOUT_MS = 60_000;

/**
 * @param file the module, absolute or relative to the current directory.
 * @throws {InvalidJobsModuleError} when the file is missing, fails to load, or exports no handlers.
 */
export function describeJobsModule(file: string): JobsModuleDescription {
  const absolute = path.resolve(file);
  if (!existsSync(absolute)) throw new InvalidJobsModuleError(absolute, 'no such file');
  const child = spawnSync(process.execPath, ['--import', tsxLoaderUrl(), '--no-warnings', describeChild(), absolute], {
    encoding: 'utf8',
    timeout: DESCRIBE_TIMEOUT_MS,
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  if (child.error) throw new InvalidJobsModuleError(absolute, `could not be loaded: ${child.error.message}`);
  if (child.status !== 0) throw new InvalidJobsModuleError(absolute, `failed to load:\n${child.stderr.trim()}`);
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  const described = JSON.parse(line) as Omit<JobsModuleDescription, 'path'>;
  return { path: absolute, ...described };
}

/** tsx's loader (a dependency of cronfence), as the URL `--import` takes. */
export function tsxLoaderUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
}

/** The child always runs as ESM (the CommonJS build has no copy of it). */
function describeChild(): string {
  return packageFile('lib/package/describe-jobs-child.ts', BUILD === 'cjs' ? 'esm' : BUILD);
}
