/** The JobReader port in memory: copies of the stored records, tombstones included. */
import type { JobRecord } from '../core/job-record.ts';
import type { JobReader } from '../core/ports.ts';
import type { MemoryTables } from './memory-tables.ts';

export class InMemoryJobReader implements JobReader {
  constructor(private readonly tables: MemoryTables) {}

  async record(id: string): Promise<JobRecord | undefined> {
    const record = this.tables.jobs.get(id);
    return record && structuredClone(record);
  }

  async records(ids: readonly string[]): Promise<Map<string, JobRecord>> {
    const found = new Map<string, JobRecord>();
    for (const id of ids) {
      const record = this.tables.jobs.get(id);
      if (record) found.set(id, structuredClone(record));
    }
    return found;
  }

  async recordsOfShard(shard: number): Promise<JobRecord[]> {
    return [...this.tables.jobs.values()]
      .filter((record) => 'shard' in record && record.shard === shard)
      .map((record) => structuredClone(record));
  }
}
