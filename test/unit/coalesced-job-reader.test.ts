/**
 * The worker's coalesced job reads (lib/aws/dynamo/coalesced-job-reader.ts):
 * the reads of one batch share one consistent batch read, each waiter gets
 * its own record, a lone read stays a single read, a failure reaches every
 * waiter of its batch, and a read asked for after a batch went out is read
 * again (it must see what returned before it was asked for).
 */
import { describe, expect, it } from 'vitest';
import { CoalescedJobReader } from '../../lib/aws/dynamo/coalesced-job-reader.ts';
import type { JobRecord } from '../../lib/core/job-record.ts';
import type { JobReader } from '../../lib/core/ports.ts';

class CountingReader implements JobReader {
  readonly calls: Array<{ kind: 'record' | 'records'; ids: readonly string[]; consistent: boolean }> = [];
  failWith?: Error;
  constructor(readonly jobs: Map<string, JobRecord>) {}

  async record(id: string): Promise<JobRecord | undefined> {
    this.calls.push({ kind: 'record', ids: [id], consistent: true });
    await Promise.resolve();
    if (this.failWith) throw this.failWith;
    return this.jobs.get(id);
  }

  async records(ids: readonly string[], consistent: boolean): Promise<Map<string, JobRecord>> {
    this.calls.push({ kind: 'records', ids, consistent });
    await Promise.resolve();
    if (this.failWith) throw this.failWith;
    return new Map(ids.flatMap((id) => (this.jobs.has(id) ? [[id, this.jobs.get(id)!] as const] : [])));
  }

  recordsOfShard(): Promise<JobRecord[]> {
    return Promise.resolve([...this.jobs.values()]);
  }
}

const job = (id: string): JobRecord => ({ id, version: 1 }) as unknown as JobRecord;

describe('CoalescedJobReader', () => {
  it('reads the jobs asked for in one turn with one consistent batch read, each waiter its own', async () => {
    const inner = new CountingReader(new Map(['a', 'b', 'c'].map((id) => [id, job(id)])));
    const reader = new CoalescedJobReader(inner);
    const read = await Promise.all(['a', 'b', 'a', 'missing', 'c'].map((id) => reader.record(id)));
    expect(read.map((record) => record?.id)).toEqual(['a', 'b', 'a', undefined, 'c']);
    expect(inner.calls).toEqual([{ kind: 'records', ids: ['a', 'b', 'missing', 'c'], consistent: true }]);
  });

  it('keeps a lone read a single consistent read', async () => {
    const inner = new CountingReader(new Map([['a', job('a')]]));
    const reader = new CoalescedJobReader(inner);
    expect((await reader.record('a'))?.id).toBe('a');
    expect(inner.calls).toEqual([{ kind: 'record', ids: ['a'], consistent: true }]);
  });

  it('rejects every waiter of a batch whose read failed', async () => {
    const inner = new CountingReader(new Map([['a', job('a')]]));
    inner.failWith = new Error('throttled');
    const reader = new CoalescedJobReader(inner);
    const results = await Promise.allSettled([reader.record('a'), reader.record('b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });

  it('reads again for a read asked for after the batch went out', async () => {
    const jobs = new Map([['a', job('a')]]);
    const inner = new CountingReader(jobs);
    const reader = new CoalescedJobReader(inner);
    const first = reader.record('a');
    await new Promise((resolve) => setImmediate(resolve));
    // A change that returned after the first batch was sent: a read asked for now must see it.
    jobs.set('a', { ...job('a'), version: 2 } as unknown as JobRecord);
    const second = await reader.record('a');
    expect((await first)?.version).toBe(1);
    expect(second?.version).toBe(2);
    expect(inner.calls).toHaveLength(2);
  });
});
