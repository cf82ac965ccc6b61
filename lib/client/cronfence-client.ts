/**
 * `cronfence/client`: schedules the application creates at run time (one per
 * tenant, say), beside the jobs its CDK stack declares, and the operator
 * actions, from code. Every definition goes through parseJobSpec (the CLI's
 * and the custom resource's validation) and is stored with origin
 * `runtime`: the stack's custom resource never replaces or deletes such a
 * job, and this client never replaces or deletes one the stack declared
 * (JobOwnershipError).
 */
import { randomUUID } from 'node:crypto';
import { createAwsClients, destroyAwsClients, type AwsClients } from '../aws/clients.ts';
import { loadConfig, operatorActor, type CronfenceConfig } from '../aws/config.ts';
import { dynamoJobRepository } from '../aws/job-repository-wiring.ts';
import type { JobRepository } from '../engine/job-repository.ts';
import { DynamoSliceStore } from '../aws/dynamo/slice-store.ts';
import { OperatorActions, type BackfillProgress, type BackfillResult, type TriggerResult } from '../aws/operator-actions.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { SqsScanQueue, SqsWorkQueue } from '../aws/sqs/work-queue.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { JobExistsError, JobNotFoundError, JobOwnershipError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import { sameDefinition } from '../core/job-lifecycle.ts';
import { parseJobSpec, type JobSpecInput } from '../core/job-spec.ts';
import type { LedgerRecord } from '../core/ledger.ts';
import { parseOperatorInstant } from '../core/operator.ts';
import type { StoredJob } from '../core/job-record.ts';
import type { Slice } from '../core/slice.ts';

export interface CronfenceClientOptions {
  /** Where the tables and queues are named (CRONFENCE_PREFIX, CRONFENCE_JOBS_TABLE, ...). @default process.env */
  readonly env?: Record<string, string | undefined>;
  /** AWS SDK clients to use. @default new ones, from the SDK's own environment (region, endpoint, credentials) */
  readonly clients?: AwsClients;
  /** Who the client's actions are recorded as. @default CRONFENCE_ACTOR, else USER, else "unknown" */
  readonly actor?: string;
  /** Handler names a job may name; when given, an unknown handler is refused before anything is written. */
  readonly knownHandlers?: readonly string[];
  /** @default the system clock */
  readonly clock?: Clock;
}

/** An instant: a Date, epoch ms, or ISO 8601 with a zone. */
export type Instant = Date | number | string;

/** One slot of a job and, once final, its ledger record. */
export interface Run {
  readonly executionKey: string;
  readonly slice: Slice;
  readonly ledger: LedgerRecord | undefined;
}

export class CronfenceClient {
  private readonly jobs: JobRepository;
  private readonly operator: OperatorActions;
  private readonly actor: string;

  constructor(
    private readonly clients: AwsClients,
    readonly config: CronfenceConfig,
    options: Pick<CronfenceClientOptions, 'actor' | 'knownHandlers' | 'clock' | 'env'> = {},
    private readonly ownsClients = false,
  ) {
    const clock = options.clock ?? systemClock;
    // A change asks for a scan of its shard, so a job created or resumed now is not late by a tick.
    const scans = new SqsScanQueue(clients.sqs, () => queueUrl(clients.sqs, config.scanQueueName, config.queueUrls.scan), clock);
    this.jobs = dynamoJobRepository(clients.dynamo, config, clock, { random: Math.random, knownHandlers: options.knownHandlers, scans });
    const queue = new SqsWorkQueue(clients.sqs, () => queueUrl(clients.sqs, config.workQueueName, config.queueUrls.work), clock);
    this.operator = new OperatorActions(
      clients.dynamo,
      config,
      clock,
      this.jobs,
      new DynamoSliceStore(clients.dynamo, config),
      queue,
      Math.random,
    );
    this.actor = operatorActor(options.actor, options.env);
  }

  /**
   * Creates a job (origin `runtime`). Creating it again with the same definition returns it unchanged.
   * @throws {InvalidJobSpecError} naming the field and value. @throws {JobExistsError} when a different job has the id.
   */
  async createJob(spec: Omit<JobSpecInput, 'origin'>): Promise<StoredJob> {
    const parsed = parseJobSpec({ ...spec, origin: 'runtime' });
    const existing = await this.jobs.get(parsed.id);
    if (existing !== undefined && !sameDefinition(existing, parsed)) throw new JobExistsError(parsed.id);
    return (await this.jobs.put(parsed)).job;
  }

  /**
   * Changes a runtime job: `changes` replace the fields they name (policies merged).
   * @throws {JobNotFoundError} @throws {JobOwnershipError} for a job the CDK stack declares. @throws {InvalidJobSpecError}
   */
  async updateJob(id: string, changes: Partial<Omit<JobSpecInput, 'id' | 'origin'>>): Promise<StoredJob> {
    const current = await this.jobs.require(id);
    const { schedule, timeZone, dst, handler, enabled, payload, policies, group } = current;
    const merged = {
      id,
      schedule,
      timeZone,
      dst,
      handler,
      enabled,
      payload,
      group,
      ...changes,
      policies: { ...policies, ...changes.policies },
      origin: 'runtime',
    };
    return (await this.jobs.put(merged)).job;
  }

  /**
   * Deletes a runtime job; its pending slices are skipped, its history stays.
   * @returns false when there was no such job. @throws {JobOwnershipError} for a job the CDK stack declares.
   */
  async deleteJob(id: string): Promise<boolean> {
    const result = await this.jobs.delete(id, { origin: 'runtime' });
    if (result.foreign) throw new JobOwnershipError(id, 'cdk', 'runtime');
    return result.deleted;
  }

  getJob(id: string): Promise<StoredJob | undefined> {
    return this.jobs.get(id);
  }

  /** Every job, or a group's. */
  listJobs(filter: { group?: string } = {}): Promise<StoredJob[]> {
    return filter.group === undefined ? this.jobs.list() : this.jobs.listGroup(filter.group);
  }

  /**
   * Runs the job once now, in an extra slot. Pass a `requestId` you keep (an
   * order id, a message id) to make retries safe: the same id never runs twice.
   * @default requestId a new random id (each call then runs once more)
   * @throws {JobNotFoundError} @throws {InvalidOperatorRequestError}
   */
  async trigger(
    id: string,
    options: { requestId?: string; payload?: Record<string, unknown>; reason?: string } = {},
  ): Promise<TriggerResult> {
    return this.operator.trigger(id, {
      actor: this.actor,
      requestId: options.requestId ?? randomUUID(),
      payload: options.payload,
      reason: options.reason,
    });
  }

  /** Runs each past occurrence in [from, to) that has no slice yet, once. @throws {InvalidOperatorRequestError} naming from, to or rate. */
  async backfill(
    id: string,
    options: { from: Instant; to: Instant; ratePerSecond?: number; reason?: string; onProgress?: (progress: BackfillProgress) => void },
  ): Promise<BackfillResult> {
    return this.operator.backfill(id, {
      ...options,
      actor: this.actor,
      from: instant('from', options.from),
      to: instant('to', options.to),
    });
  }

  /** @throws {InvalidOperatorRequestError} without a reason, or with an end not ahead. */
  async pause(id: string, options: { reason: string; until?: Instant }) {
    return this.operator.pause(id, {
      actor: this.actor,
      reason: options.reason,
      ...(options.until !== undefined && { until: instant('until', options.until) }),
    });
  }

  async resume(id: string, options: { reason?: string } = {}) {
    return this.operator.resume(id, { actor: this.actor, reason: options.reason });
  }

  async pauseGroup(group: string, options: { reason: string; until?: Instant }) {
    return this.operator.pauseGroup(group, {
      actor: this.actor,
      reason: options.reason,
      ...(options.until !== undefined && { until: instant('until', options.until) }),
    });
  }

  async resumeGroup(group: string, options: { reason?: string } = {}) {
    return this.operator.resumeGroup(group, { actor: this.actor, reason: options.reason });
  }

  /** The job's slots since `since` (default: the last hour), oldest first, each with its ledger record. @throws {JobNotFoundError} */
  async listRuns(id: string, options: { since?: Instant } = {}): Promise<Run[]> {
    if ((await this.jobs.get(id)) === undefined) throw new JobNotFoundError(id);
    const since = options.since === undefined ? Date.now() - 3_600_000 : instant('since', options.since);
    const [slices, ledger] = await Promise.all([this.jobs.slicesOf(id, since), this.jobs.ledgerOf(id, since)]);
    const byKey = new Map(ledger.map((record) => [record.executionKey, record]));
    return slices.map((slice) => {
      const key = executionKey(slice.jobId, slice.scheduledAt);
      return { executionKey: key, slice, ledger: byKey.get(key) };
    });
  }

  /** Releases the AWS clients this client made (not ones passed in). */
  close(): void {
    if (this.ownsClients) destroyAwsClients(this.clients);
  }
}

/** A client over the installation the environment names. @throws {InvalidJobSpecError} naming a bad CRONFENCE_* variable. */
export function createClient(options: CronfenceClientOptions = {}): CronfenceClient {
  const config = loadConfig(options.env);
  const clients = options.clients ?? createAwsClients();
  return new CronfenceClient(clients, config, options, options.clients === undefined);
}

function instant(field: string, value: Instant): number {
  return value instanceof Date ? parseOperatorInstant(field, value.getTime()) : parseOperatorInstant(field, value);
}
