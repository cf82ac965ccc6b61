/**
 * Stored rows checked before they are judged: the readers that look at the
 * whole installation (`cronfence verify`, the dead-man's switch) take each
 * job or slice item through these, so one row that a manual edit, a
 * migration or a bug left without a field it needs is reported by name and
 * the others are still read (docs/verify.md, "Unreadable rows").
 */
import { z } from 'zod';
import type { UnreadableRow } from '../../core/audit-rules.ts';
import { executionKey } from '../../core/execution-key.ts';
import type { JobRecord } from '../../core/job-record.ts';
import { SliceStatus, type Slice } from '../../core/slice.ts';
import { fromItem, toJobRecord, toSlice, type Item } from './items.ts';

export type { UnreadableRow } from '../../core/audit-rules.ts';

const num = z.number({ error: 'must be a number' });
const str = z.string({ error: 'must be a string' });
const policies = z.looseObject({ timeoutMs: num, leaseMs: num, jitterMs: num.optional() }, { error: 'must be an object of numbers' });

const jobRow = z.looseObject({
  jobId: str.min(1),
  schedule: str,
  timeZone: str,
  handler: str,
  enabled: z.boolean({ error: 'must be true or false' }),
  policies,
  payload: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  shard: num,
  nextFireAt: num,
  version: num,
  generation: num.optional(),
  createdAt: num,
  updatedAt: num,
  pause: z.looseObject({ until: num.optional() }, { error: 'must be an object' }).optional(),
});

const tombstoneRow = z.looseObject({
  jobId: str.min(1),
  deleted: z.literal(true),
  version: num,
  updatedAt: num,
  generation: num.optional(),
});

const sliceRow = z.looseObject({
  jobId: str.min(1),
  scheduledAt: num,
  status: z.enum(Object.values(SliceStatus), { error: 'is not a slice status' }),
  fence: num,
  attempts: num,
  generation: num.optional(),
  handler: str,
  policies,
  payload: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
});

export type RowRead<T> = { readonly value: T } | { readonly unreadable: UnreadableRow };

export function readJobRow(item: Item): RowRead<JobRecord> {
  const raw = fromItem(item);
  const parsed = (raw.deleted === true ? tombstoneRow : jobRow).safeParse(raw);
  if (parsed.success) return { value: toJobRecord(item) };
  const jobId = typeof raw.jobId === 'string' ? raw.jobId : '(no jobId)';
  return { unreadable: { table: 'jobs', key: jobId, jobId, reason: describeIssue(parsed.error) } };
}

export function readSliceRow(item: Item): RowRead<Slice> {
  const raw = fromItem(item);
  const parsed = sliceRow.safeParse(raw);
  if (parsed.success) return { value: toSlice(item) };
  const jobId = typeof raw.jobId === 'string' ? raw.jobId : '(no jobId)';
  const scheduledAt = typeof raw.scheduledAt === 'number' ? raw.scheduledAt : undefined;
  const key = scheduledAt === undefined ? jobId : executionKey(jobId, scheduledAt);
  return {
    unreadable: { table: 'slices', key, jobId, ...(scheduledAt !== undefined && { scheduledAt }), reason: describeIssue(parsed.error) },
  };
}

/** Splits items into what they are and the rows that cannot be read. */
export function readRows<T>(items: readonly Item[], read: (item: Item) => RowRead<T>): { rows: T[]; unreadable: UnreadableRow[] } {
  const rows: T[] = [];
  const unreadable: UnreadableRow[] = [];
  for (const item of items) {
    const result = read(item);
    if ('value' in result) rows.push(result.value);
    else unreadable.push(result.unreadable);
  }
  return { rows, unreadable };
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'does not parse';
  const field = issue.path.length > 0 ? issue.path.join('.') : 'the item';
  return `${field} ${issue.message}`;
}
