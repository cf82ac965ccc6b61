/**
 * The JobStore port over DynamoDB: the primitives a job change runs over
 * (engine/job-repository.ts); one record is read through the JobReader.
 *
 * RECORDS       Scan of the jobs table, consistent.
 * SLICES        Query slices[jobId] by scheduledAt, consistent.
 * WRITE CHANGE  one TransactWriteItems (job-change.ts).
 * SETTLES       Query / DeleteItem of the wheel's settle records (job-change.ts).
 * SETTLE PENDING  conditional UpdateItems (settle-pending-slices.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DueSettle, JobWrite } from '../../core/job-change.ts';
import type { JobRecord, SkipReason } from '../../core/job-record.ts';
import type { JobStore } from '../../core/ports.ts';
import type { Slice } from '../../core/slice.ts';
import type { CronfenceConfig } from '../config.ts';
import { clearSettle, pendingSettles, writeJobChange } from './job-change.ts';
import { toJobRecord, toSlice } from './items.ts';
import { queryAll, scanAll } from './read-pages.ts';
import { settlePendingSlices } from './settle-pending-slices.ts';

type JobStoreConfig = Pick<CronfenceConfig, 'jobsTable' | 'wheelTable' | 'slicesTable' | 'sliceRetentionMs'>;

export class DynamoJobStore implements JobStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: JobStoreConfig,
  ) {}

  async records(): Promise<JobRecord[]> {
    return (await scanAll(this.dynamo, { TableName: this.config.jobsTable, ConsistentRead: true })).map(toJobRecord);
  }

  async slicesOf(jobId: string, fromMs: number, toMs?: number): Promise<Slice[]> {
    const items = await queryAll(this.dynamo, {
      TableName: this.config.slicesTable,
      KeyConditionExpression:
        toMs === undefined ? 'jobId = :job AND scheduledAt >= :from' : 'jobId = :job AND scheduledAt BETWEEN :from AND :last',
      ExpressionAttributeValues: {
        ':job': { S: jobId },
        ':from': { N: String(fromMs) },
        ...(toMs !== undefined && { ':last': { N: String(toMs - 1) } }),
      },
      ConsistentRead: true,
    });
    return items.map(toSlice);
  }

  pendingSettles(shard: number, jobId: string): Promise<DueSettle[]> {
    return pendingSettles(this.dynamo, this.config, shard, jobId);
  }

  writeChange(write: JobWrite): Promise<boolean> {
    return writeJobChange(this.dynamo, this.config, write);
  }

  clearSettle(settle: DueSettle): Promise<void> {
    return clearSettle(this.dynamo, this.config, settle);
  }

  settlePending(request: { jobId: string; shard: number; generation: number; reason: SkipReason; now: number }): Promise<number> {
    return settlePendingSlices(this.dynamo, this.config.slicesTable, { ...request, retentionMs: this.config.sliceRetentionMs });
  }
}
