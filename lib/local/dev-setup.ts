/**
 * What `cronfence dev` prepares before replicas start: the schema, the
 * business tables, and the jobs. Without `--jobs`, the examples' payouts
 * table and jobs; with a user's jobs module, the tables it declares (each
 * named to its handlers through an environment variable) and its
 * `schedules` (or one job per handler), on their own schedules or one given.
 */
import { CreateTableCommand, ResourceInUseException, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { bootstrap, createTableInput } from '../aws/bootstrap.ts';
import type { TableDefinition } from '../aws/schema.ts';
import { EXAMPLE_JOBS, merchantSettlement, PAYOUTS_TABLE, payoutsTableName } from '../../examples/jobs/examples.ts';
import { registry } from '../../examples/jobs/index.ts';
import type { JobSpecInput } from '../core/job-spec.ts';
import type { StoredJob } from '../core/job-record.ts';
import type { JobsModuleDescription } from '../package/describe-jobs-module.ts';
import { tableDefinition } from '../lambda/jobs-module.ts';
import type { Runtime } from '../lambda/wiring.ts';

/** The schedule a handler gets in dev when its module declares no `schedules`. */
export const DEFAULT_DEV_SCHEDULE = '*/5 * * * * *';

export async function prepareDevEnvironment(runtime: Runtime): Promise<void> {
  await bootstrap(runtime.clients, runtime.config);
  await createBusinessTable(runtime, payoutsTableName(runtime.config.prefix), PAYOUTS_TABLE);
}

/**
 * Bootstraps and creates the module's tables.
 * @returns the environment the replicas need: each table's variable set to its local name.
 */
export async function prepareModuleEnvironment(runtime: Runtime, jobs: JobsModuleDescription): Promise<Record<string, string>> {
  await bootstrap(runtime.clients, runtime.config);
  const env: Record<string, string> = {};
  for (const table of jobs.tables) {
    const name = `${runtime.config.prefix}-${table.name}`;
    await createBusinessTable(runtime, name, tableDefinition(table));
    env[table.env] = name;
  }
  return env;
}

async function createBusinessTable(runtime: Runtime, name: string, table: TableDefinition): Promise<void> {
  try {
    await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(name, table)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: name });
}

/**
 * Registers (or re-registers) the example jobs; their first occurrence is the next one from now. With
 * `bankUrl`, the settlements wire their payouts there through the outbox.
 */
export async function registerExampleJobs(runtime: Runtime, options: { readonly bankUrl?: string } = {}): Promise<StoredJob[]> {
  const specs = EXAMPLE_JOBS.map((spec) =>
    options.bankUrl !== undefined && spec.handler === merchantSettlement.name
      ? { ...spec, payload: { ...spec.payload, bankUrl: options.bankUrl } }
      : spec,
  );
  return putAll(runtime, specs, registry.names());
}

/**
 * The module's `schedules`, or one job per handler (id = handler name) on the
 * default dev schedule; `schedule`, when given, replaces every job's
 * schedule (a monthly job every few seconds, its payload and policies kept).
 */
export async function registerModuleJobs(runtime: Runtime, jobs: JobsModuleDescription, schedule?: string): Promise<StoredJob[]> {
  const declared =
    jobs.schedules.length > 0 ? jobs.schedules : jobs.handlers.map((handler) => ({ id: handler, schedule: DEFAULT_DEV_SCHEDULE, handler }));
  const specs = schedule === undefined ? declared : declared.map((spec) => ({ ...spec, schedule }));
  return putAll(runtime, specs, jobs.handlers);
}

async function putAll(runtime: Runtime, specs: readonly JobSpecInput[], handlers: readonly string[]): Promise<StoredJob[]> {
  const repository = runtime.jobs(handlers);
  const stored: StoredJob[] = [];
  for (const spec of specs) stored.push((await repository.put(spec)).job);
  return stored;
}
