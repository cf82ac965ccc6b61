/**
 * Queue message bodies. A work message names a slice and nothing else: the
 * slice item holds the rest, so a stale or duplicated message can never carry
 * stale instructions.
 */
import { z } from 'zod';
import { MalformedMessageError } from './errors.ts';
import type { SliceKey } from './slice.ts';

const workBody = z.object({ v: z.literal(1), jobId: z.string().min(1), scheduledAt: z.number().int().nonnegative() });
const scanBody = z.object({ v: z.literal(1), shard: z.number().int().nonnegative() });

export function encodeWorkMessage(key: SliceKey): string {
  return JSON.stringify({ v: 1, jobId: key.jobId, scheduledAt: key.scheduledAt });
}

/** @throws {MalformedMessageError} */
export function decodeWorkMessage(body: string): SliceKey {
  const parsed = workBody.safeParse(parseJson(body));
  if (!parsed.success) throw new MalformedMessageError(body, describe(parsed.error));
  return { jobId: parsed.data.jobId, scheduledAt: parsed.data.scheduledAt };
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
