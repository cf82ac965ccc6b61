/**
 * Queue message bodies. A work message names a slot and nothing more: the
 * job, the second, and (a scanner's message) the generation it was sent for.
 * It never says what runs: the worker reads the job and creates the slice
 * from the definition the job has stored for that generation, and only at an
 * occurrence of it (core/claim-plan.ts). Bodies sent before this rule carried
 * the definition too (`run`): they still decode, and only their generation is read.
 */
import { z } from 'zod';
import { MalformedMessageError } from './errors.ts';
import type { SliceKey } from './slice.ts';

const generation = z.number().int().nonnegative();
/** What is left of an older body's `run`: its generation; the rest of it is never read. */
const legacyRun = z.object({ generation });
const workBody = z.object({
  v: z.literal(1),
  jobId: z.string().min(1),
  scheduledAt: z.number().int().nonnegative(),
  generation: generation.optional(),
  run: legacyRun.optional(),
});
const scanBody = z.object({ v: z.literal(1), shard: z.number().int().nonnegative() });

/** A decoded work message: the slot, and the generation it was sent for (a scanner's message has one). */
export interface WorkOrder extends SliceKey {
  readonly generation?: number;
}

export function encodeWorkMessage(order: WorkOrder): string {
  return JSON.stringify({
    v: 1,
    jobId: order.jobId,
    scheduledAt: order.scheduledAt,
    ...(order.generation !== undefined && { generation: order.generation }),
  });
}

/** @throws {MalformedMessageError} */
export function decodeWorkMessage(body: string): WorkOrder {
  const parsed = workBody.safeParse(parseJson(body));
  if (!parsed.success) throw new MalformedMessageError(body, describe(parsed.error));
  const { jobId, scheduledAt, run } = parsed.data;
  const sentFor = parsed.data.generation ?? run?.generation;
  if (parsed.data.generation !== undefined && run !== undefined && run.generation !== parsed.data.generation) {
    throw new MalformedMessageError(body, `generation: ${parsed.data.generation} disagrees with run.generation ${run.generation}`);
  }
  return sentFor === undefined ? { jobId, scheduledAt } : { jobId, scheduledAt, generation: sentFor };
}

export function encodeScanMessage(shard: number): string {
  return JSON.stringify({ v: 1, shard });
}

/** @throws {MalformedMessageError} */
export function decodeScanMessage(body: string): { shard: number } {
  const parsed = scanBody.safeParse(parseJson(body));
  if (!parsed.success) throw new MalformedMessageError(body, describe(parsed.error));
  return { shard: parsed.data.shard };
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = issue.path.join('.');
  return path ? `${path}: ${issue.message}` : `not a cronfence message (${issue.message})`;
}
