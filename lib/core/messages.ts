/**
 * Queue message bodies. A work message names a slice; one a scanner sends
 * also carries the definition of the generation it was sent for (`run`), so
 * the claim creates the slice with no write before it. The claim uses that
 * definition only to create or re-create the slice of that generation
 * (core/slice.ts `isClaimable`), and the worker checks the job's generation
 * right after claiming: a stale or duplicated message can never run a
 * definition the job no longer has.
 */
import { z } from 'zod';
import { MalformedMessageError } from './errors.ts';
import type { JobPolicies } from './job-spec.ts';
import type { SliceDefinition, SliceKey } from './slice.ts';

const runBody = z.object({
  generation: z.number().int().nonnegative(),
  handler: z.string().min(1),
  policies: z.record(z.string(), z.unknown()),
  payload: z.record(z.string(), z.unknown()).optional(),
  shard: z.number().int().nonnegative(),
});
const workBody = z.object({ v: z.literal(1), jobId: z.string().min(1), scheduledAt: z.number().int().nonnegative(), run: runBody.optional() });
const scanBody = z.object({ v: z.literal(1), shard: z.number().int().nonnegative() });

/** A decoded work message: the slice, and the definition it was sent with (a scanner's message has one). */
export interface WorkOrder extends SliceKey {
  readonly run?: SliceDefinition;
}

export function encodeWorkMessage(order: WorkOrder): string {
  return JSON.stringify({ v: 1, jobId: order.jobId, scheduledAt: order.scheduledAt, ...(order.run && { run: order.run }) });
}

/** @throws {MalformedMessageError} */
export function decodeWorkMessage(body: string): WorkOrder {
  const parsed = workBody.safeParse(parseJson(body));
  if (!parsed.success) throw new MalformedMessageError(body, describe(parsed.error));
  const { jobId, scheduledAt, run } = parsed.data;
  return run === undefined ? { jobId, scheduledAt } : { jobId, scheduledAt, run: { ...run, policies: run.policies as unknown as JobPolicies } };
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
