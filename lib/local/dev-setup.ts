/**
 * What `cronfence dev` prepares around its replicas: the jobs it runs, as
 * DevJobs. A user's jobs module (`--jobs`) brings the tables it declares
 * (each named to its handlers through an environment variable) and its
 * `schedules` (or one job per handler), on their own schedules or one given;
 * the repository's `npm start` brings the examples (examples/jobs/dev-jobs.ts).
 */
import { CreateTableCommand, ResourceInUseException, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../aws/bootstrap.ts';
import type { TableDefinition } from '../aws/schema.ts';
import type { JobSpecInput } from '../core/job-spec.ts';
import type { StoredJob } from '../core/job-record.ts';
import type { JobsModuleDescription } from '../package/describe-jobs-module.ts';
import { tableDefinition } from '../lambda/jobs-module.ts';
import type { Runtime } from '../lambda/wiring.ts';

/** The schedule a handler gets in dev when its module declares no `schedules`. */
export const DEFAULT_DEV_SCHEDULE = '*/5 * * * * *';

/** The jobs a `cronfence dev` run registers and its workers run. */
export interface DevJobs {
  /** The module the workers load (`--jobs`); without one, the replica entry knows its handlers. */
  readonly modulePath?: string;
  /** After the bootstrap: creates the business tables and starts what the jobs call. @returns the replicas' environment */
  prepare(runtime: Runtime, say: (line: string) => void): Promise<Record<string, string>>;
  /** Registers (or re-registers) the jobs once the replicas are up. */
  register(runtime: Runtime, say: (line: string) => void): Promise<StoredJob[]>;
  /** Stops what `prepare` started. @returns a line on what it did, if any */
  stop?(): Promise<string | undefined>;
}

/** A user's jobs module: its tables, and its `schedules` (or one job per handler), every one on `schedule` when given. */
export function moduleDevJobs(jobs: JobsModuleDescription, schedule?: string): DevJobs {
  return {
    modulePath: jobs.path,
    prepare: (runtime) => prepareModuleEnvironment(runtime, jobs),
    register: (runtime) => registerModuleJobs(runtime, jobs, schedule),
  };
}

/**
 * Creates the module's tables.
 * @returns the environment the replicas need: each table's variable set to its local name.
 */
async function prepareModuleEnvironment(runtime: Runtime, jobs: JobsModuleDescription): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const table of jobs.tables) {
    const name = `${runtime.config.prefix}-${table.name}`;
    await createBusinessTable(runtime, name, tableDefinition(table));
    env[table.env] = name;
  }
  return env;
}

/** A business table (not cronfence's own schema), if it is not there yet. */
export async function createBusinessTable(runtime: Runtime, name: string, table: TableDefinition): Promise<void> {
  try {
    await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(name, table)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: name });
}

/**
 * The module's `schedules`, or one job per handler (id = handler name) on the
 * default dev schedule; `schedule`, when given, replaces every job's
 * schedule (a monthly job every few seconds, its payload and policies kept).
 */
async function registerModuleJobs(runtime: Runtime, jobs: JobsModuleDescription, schedule?: string): Promise<StoredJob[]> {
  const declared =
    jobs.schedules.length > 0 ? jobs.schedules : jobs.handlers.map((handler) => ({ id: handler, schedule: DEFAULT_DEV_SCHEDULE, handler }));
  const specs = schedule === undefined ? declared : declared.map((spec) => ({ ...spec, schedule }));
  return putAll(runtime, specs, jobs.handlers);
}

/** Puts every spec, its handler checked against `handlers`. */
export async function putAll(runtime: Runtime, specs: readonly JobSpecInput[], handlers: readonly string[]): Promise<StoredJob[]> {
  const repository = runtime.jobs(handlers);
  const stored: StoredJob[] = [];
  for (const spec of specs) stored.push((await repository.put(spec)).job);
  return stored;
}
