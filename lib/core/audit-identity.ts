/**
 * The identity half of the audit behind `cronfence verify`: did each slot
 * that ran (SUCCEEDED or DEAD) run what the job's stored definition says, at
 * an instant the schedule has? Pure.
 *
 * What the stores keep: a slice records the generation it ran under and the
 * handler, payload and policies it ran with, and an operator's slot its
 * action (`operator`: trigger or backfill, who and why). A job keeps only its
 * current definition: no earlier generation's. So:
 * - a slot of the job's current generation is checked against it: handler,
 *   payload (a triggered slot's payload is the operator's, on record), and
 *   its second: an occurrence of the schedule, or a sub-second instant with
 *   an operator's trigger on record;
 * - slots of an older generation (or of a deleted job) can only be checked
 *   against each other: one generation has one definition, so slots of it
 *   that ran different handlers or payloads are reported (each slot that
 *   differs from the one most of them ran);
 * - slots of a job with no record at all are not checked (`jobs.unknown`).
 */
import type { Located } from './audit-rules.ts';
import { executionKey } from './execution-key.ts';
import { canonicalJson } from './job-lifecycle.ts';
import { isTombstone, type JobRecord, type StoredJob } from './job-record.ts';
import { isTriggeredInstant } from './operator.ts';
import { occurrencesBetween, scheduleOf } from './schedule.ts';
import { SliceStatus, type Slice } from './slice.ts';

const SHOWN_PAYLOAD_CHARS = 120;

export function identityFindings(jobs: readonly JobRecord[], slices: ReadonlyMap<string, Slice>): Located[] {
  const byId = new Map(jobs.map((job) => [job.id, job]));
  const findings: Located[] = [];
  const olderGenerations = new Map<string, Slice[]>();
  for (const slice of slices.values()) {
    if (slice.status !== SliceStatus.Succeeded && slice.status !== SliceStatus.Dead) continue;
    const job = byId.get(slice.jobId);
    if (job === undefined) continue;
    if (!isTombstone(job) && slice.generation === job.generation) {
      findings.push(...currentGenerationFindings(job, slice));
    } else if (slice.generation > job.generation) {
      findings.push(
        at(
          slice,
          'wrong_definition',
          `ran under generation ${slice.generation}, but the job is at generation ${job.generation}: no such definition was ever stored`,
        ),
      );
    } else {
      const group = `${slice.jobId}\u0000${slice.generation}`;
      olderGenerations.set(group, [...(olderGenerations.get(group) ?? []), slice]);
    }
  }
  for (const group of olderGenerations.values()) findings.push(...disagreeingSlots(group));
  return findings;
}

function currentGenerationFindings(job: StoredJob, slice: Slice): Located[] {
  const out: Located[] = [];
  const generation = `generation ${job.generation}`;
  if (slice.handler !== job.handler) {
    out.push(
      at(
        slice,
        'wrong_definition',
        `ran handler ${JSON.stringify(slice.handler)}; the job's ${generation} runs ${JSON.stringify(job.handler)}`,
      ),
    );
  }
  const trigger = slice.operator?.action === 'trigger';
  if (!trigger && canonicalJson(slice.payload ?? null) !== canonicalJson(job.payload ?? null)) {
    out.push(at(slice, 'wrong_definition', `ran payload ${shown(slice.payload)}; the job's ${generation} has ${shown(job.payload)}`));
  }
  const occurrence = occurrenceFinding(job, slice, trigger);
  if (occurrence !== undefined) out.push(at(slice, 'not_an_occurrence', occurrence));
  return out;
}

/** Why the slot's instant is not one the job may run at; undefined when it is. */
function occurrenceFinding(job: StoredJob, slice: Slice, trigger: boolean): string | undefined {
  if (isTriggeredInstant(slice.scheduledAt)) return trigger ? undefined : `a sub-second slot with no operator's trigger on record`;
  let found: number[];
  try {
    found = occurrencesBetween(scheduleOf(job), slice.scheduledAt, slice.scheduledAt + 1, 1);
  } catch {
    return undefined; // A schedule that does not parse is reported once, as set_aside.
  }
  if (found[0] === slice.scheduledAt) return undefined;
  const backfill = slice.operator?.action === 'backfill' ? ' (a backfilled slot must be one)' : '';
  return `${slice.status} at a second that is not an occurrence of ${JSON.stringify(job.schedule)} (${job.timeZone})${backfill}`;
}

/** Slots of one older generation that ran another definition than most of its slots did. */
function disagreeingSlots(group: readonly Slice[]): Located[] {
  const definitionOf = (slice: Slice): string =>
    `handler ${JSON.stringify(slice.handler)}${slice.operator?.action === 'trigger' ? '' : ` with payload ${shown(slice.payload)}`}`;
  const handlers = tally(group.map((slice) => slice.handler));
  const payloads = tally(
    group.filter((slice) => slice.operator?.action !== 'trigger').map((slice) => canonicalJson(slice.payload ?? null)),
  );
  const [usualHandler] = handlers;
  const [usualPayload] = payloads;
  if (handlers.length <= 1 && payloads.length <= 1) return [];
  const usual = group.find(
    (slice) =>
      slice.handler === usualHandler && (slice.operator?.action === 'trigger' || canonicalJson(slice.payload ?? null) === usualPayload),
  );
  return group
    .filter(
      (slice) =>
        slice.handler !== usualHandler || (slice.operator?.action !== 'trigger' && canonicalJson(slice.payload ?? null) !== usualPayload),
    )
    .map((slice) =>
      at(
        slice,
        'wrong_definition',
        `ran ${definitionOf(slice)}, but most slots of generation ${slice.generation} ran ${usual ? definitionOf(usual) : `handler ${JSON.stringify(usualHandler)}`} (an older generation: its definition is not stored, only its slots are compared)`,
      ),
    );
}

/** Distinct values, the most frequent first. */
function tally(values: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([value]) => value);
}

function at(slice: Slice, kind: Located['kind'], detail: string): Located {
  return { kind, detail, executionKey: executionKey(slice.jobId, slice.scheduledAt), jobId: slice.jobId, scheduledAt: slice.scheduledAt };
}

function shown(payload: unknown): string {
  const text = canonicalJson(payload ?? null);
  return text.length > SHOWN_PAYLOAD_CHARS ? `${text.slice(0, SHOWN_PAYLOAD_CHARS)}…` : text;
}
