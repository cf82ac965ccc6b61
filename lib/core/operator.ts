/**
 * Operator actions (trigger, backfill, pause with an end, resume): who did
 * them and why, and the pure rules for where an operator-created slot sits.
 *
 * A triggered slot is an extra slot of the job, never one of its occurrences:
 * it sits at a sub-second instant (the trigger's second plus 1 to 999 ms),
 * while every scheduled occurrence is a whole second, so its execution key
 * (`jobId:2026-12-01T13:00:00.417Z`) can never take an occurrence's key. The
 * offset derives from the request id; the request id's marker item (its sort
 * key derives from the request id alone) is written in the same transaction
 * as the slot, so a command retried with the same request id finds the slot
 * its first try created, whenever it is retried.
 */
import { createHash } from 'node:crypto';
import { InvalidOperatorRequestError } from './errors.ts';

/** Who did it and why; recorded on the job (pause, resume) or the slot (trigger, backfill). */
export interface OperatorNote {
  /** From `--actor`, else CRONFENCE_ACTOR, else USER. */
  readonly actor: string;
  readonly reason?: string;
  /** Epoch ms. */
  readonly at: number;
}

/** A pause as recorded on the job. */
export interface PauseState extends OperatorNote {
  /** Epoch ms the job resumes by itself; absent: paused until `resume`. */
  readonly until?: number;
}

/** What made an operator slot. */
export interface OperatorSlot extends OperatorNote {
  readonly action: 'trigger' | 'backfill';
  /** trigger: the request id the slot's key derives from. */
  readonly requestId?: string;
}

const MAX_REASON_CHARS = 500;
const MAX_REQUEST_ID_CHARS = 128;
/** Tries for a free offset when another trigger in the same second took this one's. */
export const TRIGGER_OFFSET_TRIES = 5;

/**
 * The triggered slot's instant: the second of `now` plus an offset in
 * [1, 999] ms from the request id (`attempt` > 0 steps past an offset another
 * trigger of that second already holds).
 */
export function triggerInstant(requestId: string, now: number, attempt = 0): number {
  const second = Math.floor(now / 1000) * 1000;
  return second + 1 + ((hash48(requestId) + attempt) % 999);
}

/**
 * The sort key of a trigger request's marker: negative, so no history read
 * (every one reads scheduledAt from some instant on) ever meets it.
 */
export function requestMarkerInstant(requestId: string): number {
  return -1 - hash48(`request:${requestId}`);
}

/** Is this a slot an operator added (a sub-second instant), rather than an occurrence? */
export function isTriggeredInstant(scheduledAt: number): boolean {
  return scheduledAt % 1000 !== 0;
}

/** @throws {InvalidOperatorRequestError} naming the field and value. */
export function validateRequestId(requestId: string): string {
  if (requestId.length === 0 || requestId.length > MAX_REQUEST_ID_CHARS) {
    throw new InvalidOperatorRequestError('requestId', requestId, `must be 1 to ${MAX_REQUEST_ID_CHARS} characters`);
  }
  return requestId;
}

/** @throws {InvalidOperatorRequestError} */
export function validateReason(reason: string | undefined, required: boolean): string | undefined {
  if (reason === undefined || reason.trim() === '') {
    if (required) throw new InvalidOperatorRequestError('reason', reason, 'is required: say why (it is recorded with the actor)');
    return undefined;
  }
  if (reason.length > MAX_REASON_CHARS)
    throw new InvalidOperatorRequestError('reason', `${reason.length} characters`, `must be at most ${MAX_REASON_CHARS} characters`);
  return reason;
}

/**
 * An instant an operator gave: ISO 8601 with a zone (`2026-12-24T18:00:00Z`,
 * `...+01:00`) or epoch ms. A zoneless time is refused: it would be read in
 * whatever zone the operator's machine has.
 * @throws {InvalidOperatorRequestError} naming `field` and the value.
 */
export function parseOperatorInstant(field: string, value: string | number): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new InvalidOperatorRequestError(field, value, 'must be a finite epoch-ms number');
  }
  if (/^\d+$/.test(value)) return Number(value);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i.test(value);
  const parsed = Date.parse(value);
  if (!zoned || Number.isNaN(parsed)) {
    throw new InvalidOperatorRequestError(field, value, 'must be an ISO 8601 time with a zone, like 2026-12-24T18:00:00Z, or epoch ms');
  }
  return parsed;
}

/** The pause's end must be ahead: a pause that ended before it began is a typo. @throws {InvalidOperatorRequestError} */
export function validatePauseUntil(until: number | undefined, now: number): number | undefined {
  if (until !== undefined && until <= now) {
    throw new InvalidOperatorRequestError(
      'until',
      new Date(until).toISOString(),
      `must be in the future (now is ${new Date(now).toISOString()})`,
    );
  }
  return until;
}

/** 48 bits of SHA-256: stable across processes, exact as a JS number. */
function hash48(value: string): number {
  return createHash('sha256').update(value).digest().readUIntBE(0, 6);
}
