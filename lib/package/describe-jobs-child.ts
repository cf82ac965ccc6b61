/**
 * Child process of describeJobsModule: loads a jobs module (through tsx's
 * loader, so TypeScript and either module format load) and prints what it
 * exports as one JSON line. A module that fails to load exits 1 with its error.
 *
 *   node --import tsx describe-jobs-child.js <jobs module path>
 */
import { pathToFileURL } from 'node:url';
import { jobsFromModule } from '../lambda/jobs-module.ts';

const [file] = process.argv.slice(2);
try {
  if (!file) throw new Error('usage: describe-jobs-child <jobs module path>');
  const jobs = jobsFromModule((await import(pathToFileURL(file).href)) as Record<string, unknown>, file);
  process.stdout.write(`${JSON.stringify({ handlers: jobs.registry.names(), schedules: jobs.schedules, tables: jobs.tables })}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
}
