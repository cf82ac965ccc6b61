/**
 * What `cronfence dev` prepares before replicas start: the schema, the
 * examples' business table, and the example jobs.
 */
import { CreateTableCommand, ResourceInUseException, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { bootstrap, createTableInput } from '../aws/bootstrap.ts';
import { EXAMPLE_JOBS, PAYOUTS_TABLE, payoutsTableName } from '../../functions/jobs/examples.ts';
import { registry } from '../../functions/jobs/index.ts';
import type { StoredJob } from '../core/ports.ts';
import type { Runtime } from './wiring.ts';

export async function prepareDevEnvironment(runtime: Runtime): Promise<void> {
  await bootstrap(runtime.clients, runtime.config);
  const payouts = payoutsTableName(runtime.config.prefix);
  try {
    await runtime.clients.dynamo.send(new CreateTableCommand(createTableInput(payouts, PAYOUTS_TABLE)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: runtime.clients.dynamo, maxWaitTime: 60 }, { TableName: payouts });
}

/** Registers (or re-registers) the example jobs; their first occurrence is the next one from now. */
export async function registerExampleJobs(runtime: Runtime): Promise<StoredJob[]> {
  const jobs = runtime.jobs(registry.names());
  const stored: StoredJob[] = [];
  for (const spec of EXAMPLE_JOBS) stored.push((await jobs.put(spec)).job);
  return stored;
}
