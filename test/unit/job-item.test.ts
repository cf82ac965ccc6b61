import { describe, expect, it } from 'vitest';
import { jobItem, jobRecordItem, toJobRecord, toStoredJob } from '../../lib/aws/dynamo/items.ts';
import type { JobTombstone, StoredJob } from '../../lib/core/job-record.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';

const job: StoredJob = {
  id: 'nightly',
  schedule: '30 2 * * *',
  timeZone: 'America/New_York',
  dst: { gap: 'skip', repeat: 'twice' },
  handler: 'report',
  enabled: true,
  policies: DEFAULT_POLICIES,
  shard: 3,
  nextFireAt: Date.parse('2026-03-09T06:30:00Z'),
  version: 7,
  generation: 1,
  createdAt: 1,
  updatedAt: 2,
};

describe('job item', () => {
  it('keeps the DST policy through a write and a read', () => {
    expect(toStoredJob(jobItem(job)).dst).toEqual({ gap: 'skip', repeat: 'twice' });
  });

  it('reads an item written before the DST policy existed as the default (shift, once)', () => {
    const { dst: _dst, ...item } = jobItem(job);
    expect(toStoredJob(item).dst).toEqual({ gap: 'shift', repeat: 'once' });
  });

  it("keeps the change's reason, on a job and on a tombstone, through a write and a read", () => {
    const paused: StoredJob = { ...job, enabled: false, generation: 2, changeReason: 'paused' };
    expect(toJobRecord(jobRecordItem(paused))).toEqual(paused);
    const tombstone: JobTombstone = { id: 'nightly', deleted: true, generation: 3, version: 9, updatedAt: 5, changeReason: 'deleted' };
    expect(toJobRecord(jobRecordItem(tombstone))).toEqual(tombstone);
  });

  it('writes no due-index key: no scan reads the jobs table by due time any more', () => {
    expect(Object.keys(jobItem(job))).not.toContain('dueShard');
  });
});
