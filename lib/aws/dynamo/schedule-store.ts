/**
 * The ScheduleStore port over DynamoDB: the scanner's read of the "due"
 * index and its advance transaction (advance-job.ts).
 */
import type { MissedRange, SkippedRange } from '../../core/advance-plan.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AdvanceOutcome, NewSlice, ScheduleStore, StoredJob } from '../../core/ports.ts';
import type { CronfenceConfig } from '../config.ts';
import { advanceJob } from './advance-job.ts';
import { toStoredJob } from './items.ts';
import { queryAll } from './read-pages.ts';

export const DUE_INDEX = 'due';

export class DynamoScheduleStore implements ScheduleStore {
  constructor(
    private readonly dynamo: DynamoDBClient,
    private readonly config: Pick<CronfenceConfig, 'jobsTable' | 'slicesTable' | 'sweepGraceMs'>,
  ) {}

  async queryDue(shard: number, untilMs: number, limit: number): Promise<StoredJob[]> {
    const items = await queryAll(
      this.dynamo,
      {
        TableName: this.config.jobsTable,
        IndexName: DUE_INDEX,
        KeyConditionExpression: 'dueShard = :shard AND nextFireAt < :until',
        ExpressionAttributeValues: { ':shard': { N: String(shard) }, ':until': { N: String(untilMs) } },
      },
      limit,
    );
    return items.map(toStoredJob);
  }

  advance(job: StoredJob, slices: readonly NewSlice[], nextFireAt: number, now: number, missed?: MissedRange, skipped?: SkippedRange): Promise<AdvanceOutcome> {
    return advanceJob(this.dynamo, this.config, job, slices, nextFireAt, now, missed, skipped);
  }
}
