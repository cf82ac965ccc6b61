/**
 * `startCronfenceTest`: a fresh cronfence installation for a user's own tests
 * (vitest or jest). It starts the bundled emulator (or uses AWS_ENDPOINT_URL),
 * bootstraps a fresh prefix, creates the jobs module's business tables (their
 * names put in the environment variables the handlers read), and runs slices
 * of the module's jobs through a real Worker over the real adapters: claim,
 * lease, handler, commit on the fence.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, ScanCommand, waitUntilTableExists, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { bootstrap, createTableInput } from '../aws/bootstrap.ts';
import { createAwsClients, destroyAwsClients, type AwsClients } from '../aws/clients.ts';
import type { HandlerRegistry } from '../engine/define-job.ts';
import { jobsFromModule, tableDefinition, type JobsModule, type JobsModuleExports, type LocalTable } from '../lambda/jobs-module.ts';
import { PACKAGE_ROOT } from '../package/package-files.ts';
import { ensureAwsEndpoint, type AwsEndpoint } from '../local/emulator.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';
import type { JobSpecInput } from '../core/job-spec.ts';
import { OUTBOX_SHARDS, type OutboxItem } from '../core/chunks.ts';
import { realSleep, systemClock } from '../core/clock.ts';
import { OutboxDispatcher, type DeliverRequest } from '../engine/outbox-dispatcher.ts';
import {
  runSlice,
  runSliceWithTakeover,
  type RunSliceOptions,
  type SliceRun,
  type TakeoverOptions,
  type TakeoverRun,
} from './run-slice.ts';

export interface CronfenceTestOptions {
  /** Your jobs module (`import * as jobs from '../src/cron-jobs'`), or a HandlerRegistry. */
  readonly jobs: JobsModuleExports | HandlerRegistry;
  /** Business tables besides the module's own `tables`. @default none */
  readonly tables?: readonly LocalTable[];
  /** Progress lines (the emulator's first start creates its Python venv: about a minute). @default silent */
  readonly log?: (line: string) => void;
}

/**
 * @throws {InvalidJobsModuleError} when `jobs` exports no handlers.
 * @throws {EmulatorSetupError | EmulatorStartError} when the emulator cannot start (no Python 3.10+).
 */
export async function startCronfenceTest(options: CronfenceTestOptions): Promise<CronfenceTest> {
  const jobs = jobsFromModule(options.jobs);
  const endpoint = await ensureAwsEndpoint({ repoRoot: PACKAGE_ROOT, log: options.log });
  const clients = createAwsClients();
  try {
    const prefix = `ct${randomUUID().slice(0, 8)}`;
    const env: Record<string, string | undefined> = { ...process.env, CRONFENCE_PREFIX: prefix, CRONFENCE_SHARDS: '1' };
    const runtime = createRuntime({ env, clients });
    await bootstrap(clients, runtime.config);
    const test = new CronfenceTest(jobs, runtime, env, endpoint);
    for (const table of [...jobs.tables, ...(options.tables ?? [])]) await test.createTable(table);
    return test;
  } catch (error) {
    destroyAwsClients(clients);
    await endpoint.stop();
    throw error;
  }
}

export class CronfenceTest {
  readonly prefix: string;
  private readonly restoreEnv = new Map<string, string | undefined>();

  constructor(
    private readonly jobs: JobsModule,
    private readonly runtime: Runtime,
    private readonly env: Record<string, string | undefined>,
    private readonly endpoint: AwsEndpoint,
  ) {
    this.prefix = runtime.config.prefix;
  }

  /** The endpoint in use: AWS_ENDPOINT_URL as found, or the emulator started for this test. */
  get endpointUrl(): string | undefined {
    return this.endpoint.endpoint;
  }

  /** A business table's name here (`${prefix}-${name}`). */
  tableName(name: string): string {
    return `${this.prefix}-${name}`;
  }

  /** Creates a business table and sets `process.env[table.env]` to its name (restored by `stop`). */
  async createTable(table: LocalTable): Promise<string> {
    const name = this.tableName(table.name);
    await this.clients.dynamo.send(new CreateTableCommand(createTableInput(name, tableDefinition(table))));
    await waitUntilTableExists({ client: this.clients.dynamo, maxWaitTime: 60 }, { TableName: name });
    if (!this.restoreEnv.has(table.env)) this.restoreEnv.set(table.env, process.env[table.env]);
    process.env[table.env] = name;
    return name;
  }

  /** Every item of a business table (by its name in the module's `tables`, or a physical name). */
  async items(table: string): Promise<Record<string, unknown>[]> {
    const tableName = table.startsWith(`${this.prefix}-`) ? table : this.tableName(table);
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.clients.dynamo.send(
        new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }),
      );
      items.push(...(page.Items ?? []).map((item) => unmarshall(item)));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  /**
   * Runs one slice of a job, one attempt, through a real Worker: claim, lease,
   * your handler, commit on the fence.
   * @param job a job id from the module's `schedules`, a handler name (a job of that name), or a job spec.
   */
  runSlice(job: string | JobSpecInput, options: RunSliceOptions = {}): Promise<SliceRun> {
    return runSlice(this.context(), job, options);
  }

  /**
   * Runs one slice and makes its worker lose the lease mid-run: a second
   * worker takes the slice over (fence + 1) and runs it, while the first
   * keeps running as a zombie whose commit the fence refuses. Shows what your
   * handler's side effects do when that happens.
   */
  runSliceWithTakeover(job: string | JobSpecInput, options: TakeoverOptions = {}): Promise<TakeoverRun> {
    return runSliceWithTakeover(this.context(), job, options);
  }

  /**
   * Delivers what a slice's chunks recorded in the outbox (`ctx.commitChunk(n, { outbox })`) as the
   * construct's outbox Lambda does: an OutboxDispatcher's passes, retrying with backoff, until none of the
   * execution's requests is pending (or `timeoutMs` passed).
   * @returns every outbound request of the execution, as recorded after delivery (DELIVERED, or DEAD).
   */
  async deliverOutbox(
    executionKey: string,
    options: { readonly timeoutMs?: number; readonly deliver?: DeliverRequest } = {},
  ): Promise<OutboxItem[]> {
    // runSlice's workers run on the slice's clock (a monthly job's next occurrence may be weeks ahead), and the
    // requests they recorded are due by it: the dispatcher's clock runs at least as far ahead as the latest of them.
    const clock = { ...systemClock, aheadMs: 0, now: () => Date.now() + clock.aheadMs };
    const dispatcher = new OutboxDispatcher({
      store: this.runtime.outbox,
      clock,
      backoff: { baseMs: 50, maxMs: 500 },
      deliver: options.deliver,
      deadLetters: this.runtime.deadLetters,
    });
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      const items = await this.runtime.outbox.list(executionKey);
      const pending = items.filter((item) => item.status === 'PENDING');
      if (pending.length === 0 || Date.now() > deadline) return items;
      clock.aheadMs = Math.max(clock.aheadMs, ...pending.map((item) => item.createdAt - Date.now()));
      let moved = 0;
      for (let shard = 0; shard < OUTBOX_SHARDS; shard++) {
        const pass = await dispatcher.dispatchDue(200, shard);
        moved += pass.delivered + pass.retried + pass.dead;
      }
      // Only retries waiting out their backoff are left.
      if (moved === 0) await realSleep(100);
    }
  }

  /** Stops the emulator if this test started it, and puts the table variables back. */
  async stop(): Promise<void> {
    for (const [name, value] of this.restoreEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    destroyAwsClients(this.clients);
    await this.endpoint.stop();
  }

  private get clients(): AwsClients {
    return this.runtime.clients;
  }

  private context(): { jobs: JobsModule; runtime: Runtime; env: Record<string, string | undefined> } {
    return { jobs: this.jobs, runtime: this.runtime, env: this.env };
  }
}
