/**
 * A worker's job reads, coalesced: the records asked for in the same turn of
 * the event loop (the messages of one SQS batch each read their job before
 * the claim) go out as one consistent BatchGetItem instead of one GetItem
 * each. Each read is still consistent and still sent after it was asked for,
 * so it sees every change that returned before; a lone read stays a GetItem.
 * DynamoDB bills each item of a batch as a GetItem of it, so only the request
 * count changes (ten claims' reads: one request, not ten).
 */
import type { JobRecord } from '../../core/job-record.ts';
import type { JobReader } from '../../core/ports.ts';

interface PendingRead {
  readonly id: string;
  readonly resolve: (record: JobRecord | undefined) => void;
  readonly reject: (error: unknown) => void;
}

export class CoalescedJobReader implements JobReader {
  private pending: PendingRead[] = [];

  constructor(private readonly reader: JobReader) {}

  record(id: string): Promise<JobRecord | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push({ id, resolve, reject });
    });
  }

  records(ids: readonly string[], consistent: boolean): Promise<Map<string, JobRecord>> {
    return this.reader.records(ids, consistent);
  }

  recordsOfShard(shard: number): Promise<JobRecord[]> {
    return this.reader.recordsOfShard(shard);
  }

  private async flush(): Promise<void> {
    const reads = this.pending;
    this.pending = [];
    const ids = [...new Set(reads.map((read) => read.id))];
    try {
      if (ids.length === 1) {
        const record = await this.reader.record(ids[0]!);
        for (const read of reads) read.resolve(record);
        return;
      }
      const found = await this.reader.records(ids, true);
      for (const read of reads) read.resolve(found.get(read.id));
    } catch (error) {
      for (const read of reads) read.reject(error);
    }
  }
}
