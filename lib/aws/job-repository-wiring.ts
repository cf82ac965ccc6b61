/**
 * The composition of a JobRepository (engine/job-repository.ts) over
 * DynamoDB: the use case given its store adapters, for every entry that
 * changes jobs (the runtime, the client, the jobs resource, the CLI).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Random } from '../core/backoff.ts';
import type { Clock } from '../core/clock.ts';
import type { ScanQueue } from '../core/ports.ts';
import { JobRepository } from '../engine/job-repository.ts';
import type { CronfenceConfig } from './config.ts';
import { DynamoJobReader } from './dynamo/job-reader.ts';
import { DynamoJobStore } from './dynamo/job-store.ts';
import { DynamoSliceStore } from './dynamo/slice-store.ts';
import { DynamoWheelStore } from './dynamo/wheel-store.ts';

export interface JobRepositoryWiring {
  /** The jitter of the adapters' retries. */
  readonly random: Random;
  /** Handler names a put must name one of; any, when undefined. */
  readonly knownHandlers?: readonly string[];
  /** Where a change asks for a scan of its shard; without it, changes wait for the tick. */
  readonly scans?: ScanQueue;
}

export function dynamoJobRepository(
  dynamo: DynamoDBClient,
  config: Pick<CronfenceConfig, 'jobsTable' | 'wheelTable' | 'slicesTable' | 'shardCount' | 'sliceRetentionMs'>,
  clock: Clock,
  wiring: JobRepositoryWiring,
): JobRepository {
  return new JobRepository({
    jobs: new DynamoJobStore(dynamo, config),
    reader: new DynamoJobReader(dynamo, config, clock, wiring.random),
    slices: new DynamoSliceStore(dynamo, config),
    wheel: new DynamoWheelStore(dynamo, config, clock, wiring.random),
    clock,
    shardCount: config.shardCount,
    knownHandlers: wiring.knownHandlers,
    scans: wiring.scans,
  });
}
