import { describe, expect, it } from 'vitest';
import { jobItem, toStoredJob } from '../../lib/aws/dynamo/items.ts';
import { DEFAULT_POLICIES } from '../../lib/core/job-spec.ts';
import type { StoredJob } from '../../lib/core/ports.ts';

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
});
