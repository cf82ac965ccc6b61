/** A stored job row as the tools' checkers meet it: enabled, in UTC, shard 0, live since `updatedAt`. */
import type { JobRecord } from '../../lib/core/job-record.ts';

export function storedJobRecord(
  id: string,
  schedule: string,
  generation: number,
  updatedAt: number,
  extra: Record<string, unknown> = {},
): JobRecord {
  return {
    id,
    schedule,
    timeZone: 'UTC',
    dst: 'shift-forward',
    handler: 'chaos-fast',
    enabled: true,
    policies: {},
    shard: 0,
    nextFireAt: updatedAt,
    version: generation,
    generation,
    createdAt: updatedAt,
    updatedAt,
    ...extra,
  } as unknown as JobRecord;
}
