/**
 * `cronfence verify`'s check of chunked slices (core/chunks.ts): what the
 * chunks table holds, judged against each execution's slice. Pure: the
 * reader (lib/aws/verify-chunks.ts) loads the records, this judges them.
 *
 * - chunk-fence-ahead: a chunk record's fence is above its slice's fence
 *   (no claim that high ever existed).
 * - chunk-after-final: a chunk committed after its slice became final (the
 *   fence check should have refused it).
 * - chunk-after-takeover: a chunk of an older claim committed after the
 *   slice's current claim started, by more than the clock-skew margin the
 *   two workers' clocks may disagree by (the fence should have refused it).
 * - chunk-without-slice: a chunk record whose slice does not exist (and has
 *   not expired: only executions in the window are read).
 * - outbox-without-chunk / outbox-fence-mismatch: an outbound request not
 *   committed with the chunk it names (they are one transaction).
 * - outbox-stuck: a request still PENDING longer than the grace after it
 *   was due. DEAD requests are counted, not violations (dead-lettered).
 */
import type { ChunkRecord, OutboxItem } from './chunks.ts';
import { executionKey } from './execution-key.ts';
import type { Slice } from './slice.ts';
import { LEASE_EXPIRY_MARGIN_MS, SliceStatus } from './slice.ts';

export const CHUNK_VIOLATION_KINDS = [
  'chunk-fence-ahead',
  'chunk-after-final',
  'chunk-after-takeover',
  'chunk-without-slice',
  'outbox-without-chunk',
  'outbox-fence-mismatch',
  'outbox-stuck',
] as const;
export type ChunkViolationKind = (typeof CHUNK_VIOLATION_KINDS)[number];

export interface ChunkViolation {
  readonly kind: ChunkViolationKind;
  readonly executionKey: string;
  readonly detail: string;
}

export interface ChunkAuditReport {
  readonly executions: number;
  readonly chunks: number;
  readonly outbox: { readonly pending: number; readonly delivered: number; readonly dead: number };
  readonly violations: readonly ChunkViolation[];
}

export interface ChunkAuditInput {
  readonly chunks: readonly ChunkRecord[];
  readonly outbox: readonly OutboxItem[];
  /** The slices of the executions the records name (missing ones absent). */
  readonly slices: readonly Slice[];
  readonly now: number;
  readonly graceMs: number;
}

export function auditChunks(input: ChunkAuditInput): ChunkAuditReport {
  const sliceOf = new Map(input.slices.map((slice) => [executionKey(slice.jobId, slice.scheduledAt), slice]));
  const chunkOf = new Map(input.chunks.map((record) => [`${record.executionKey}#${record.chunk}`, record]));
  const violations: ChunkViolation[] = [];
  const flag = (kind: ChunkViolationKind, key: string, detail: string): void => {
    violations.push({ kind, executionKey: key, detail });
  };
  for (const record of input.chunks) {
    const slice = sliceOf.get(record.executionKey);
    if (slice === undefined) flag('chunk-without-slice', record.executionKey, `chunk ${record.chunk} has no slice`);
    else if (record.fence > slice.fence)
      flag('chunk-fence-ahead', record.executionKey, `chunk ${record.chunk} fence ${record.fence} > slice fence ${slice.fence}`);
    else if (isFinal(slice) && slice.finishedAt !== undefined && record.committedAt > slice.finishedAt) {
      flag(
        'chunk-after-final',
        record.executionKey,
        `chunk ${record.chunk} committed ${record.committedAt - slice.finishedAt} ms after the slice became ${slice.status}`,
      );
    } else if (
      record.fence < slice.fence &&
      slice.startedAt !== undefined &&
      record.committedAt > slice.startedAt + LEASE_EXPIRY_MARGIN_MS
    ) {
      flag(
        'chunk-after-takeover',
        record.executionKey,
        `chunk ${record.chunk} of fence ${record.fence} committed ${record.committedAt - slice.startedAt} ms after fence ${slice.fence}'s claim`,
      );
    }
  }
  const outbox = { pending: 0, delivered: 0, dead: 0 };
  for (const item of input.outbox) {
    outbox[item.status === 'PENDING' ? 'pending' : item.status === 'DELIVERED' ? 'delivered' : 'dead']++;
    const chunk = chunkOf.get(`${item.executionKey}#${item.chunk}`);
    if (chunk === undefined)
      flag('outbox-without-chunk', item.executionKey, `request ${item.requestKey} names chunk ${item.chunk}, which has no record`);
    else if (chunk.fence !== item.fence)
      flag('outbox-fence-mismatch', item.executionKey, `request ${item.requestKey} fence ${item.fence}, its chunk's ${chunk.fence}`);
    if (item.status === 'PENDING' && (item.dueAt ?? item.createdAt) + input.graceMs < input.now) {
      flag(
        'outbox-stuck',
        item.executionKey,
        `request ${item.requestKey} pending since ${new Date(item.dueAt ?? item.createdAt).toISOString()} (${item.deliveries} deliveries)`,
      );
    }
  }
  return { executions: new Set(input.chunks.map((record) => record.executionKey)).size, chunks: input.chunks.length, outbox, violations };
}

function isFinal(slice: Slice): boolean {
  return slice.status === SliceStatus.Succeeded || slice.status === SliceStatus.Dead;
}
