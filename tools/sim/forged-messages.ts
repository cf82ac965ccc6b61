/**
 * Forged and garbled work messages: what a producer other than cronfence's
 * scanners may put on the work queue (anyone its queue policy lets send, a
 * replayed or truncated body). None may run (core/messages.ts: a message
 * names a slot, never what runs): each is dead-lettered as rejected, with its
 * reason, and deleted; no slice, claim or effect appears for what it names.
 *
 * Each names a slot that is no occurrence of its job, or a job that does not
 * exist, or no slot at all; a forged message at a real occurrence is the
 * scanner's own message again, which the duplicate and missed checks cover.
 */
import { executionKey } from '../../lib/core/execution-key.ts';
import type { RejectedMessage } from '../../lib/memory/memory-queue.ts';
import type { Enumerate } from '../chaos/expected.ts';
import type { JobHistoryBook } from '../chaos/job-history.ts';
import { SeededRandom } from '../chaos/random.ts';

export const FORGED_KINDS = [
  /** Not a work message: bad JSON, a field of the wrong type, a body cut short. */
  'garbled',
  /** A scanner's message for a job that does not exist. */
  'unknownJob',
  /** A scanner's message (with the job's generation) at a second that is no occurrence of the job. */
  'offSchedule',
  /** A sweep's message (no generation) for a slice no scan made. */
  'noSlice',
  /** An old body's `run` with another handler and payload, at a second that is no occurrence. */
  'legacyRun',
  /** A sweep's message for a slot two hours ahead: further than any scan creates slices. */
  'farAhead',
] as const;
export type ForgedKind = (typeof FORGED_KINDS)[number];

export interface PlannedForgery {
  readonly atMs: number;
  readonly kind: ForgedKind;
}

/** One forged message, as sent. */
export interface Forgery {
  readonly kind: ForgedKind;
  readonly body: string;
  readonly at: number;
  /** The slot it names, when it names one. */
  readonly executionKey?: string;
  /** The generation it claims to be sent for, and its job's. */
  readonly generation?: number;
  readonly jobId?: string;
}

const FIRST_MS = 5000;
const MEAN_GAP_MS = 15_000;
const FAR_AHEAD_MS = 2 * 3_600_000;

/** About four a minute, from the seed alone. */
export function planForgeries(options: { readonly seed: number; readonly durationMs: number }): PlannedForgery[] {
  const random = new SeededRandom(options.seed * 7_368_787 + 13);
  const plan: PlannedForgery[] = [];
  for (let atMs = FIRST_MS + random.int(0, MEAN_GAP_MS); atMs < options.durationMs; atMs += random.int(MEAN_GAP_MS / 2, MEAN_GAP_MS * 1.5))
    plan.push({ atMs, kind: random.pick(FORGED_KINDS) });
  return plan;
}

export interface ForgeryDeps {
  /** SendMessage with any body. */
  readonly sendBody: (body: string) => Promise<void>;
  readonly book: JobHistoryBook;
  readonly jobIds: readonly string[];
  readonly enumerate: Enumerate;
  readonly now: () => number;
}

export class ForgeryInjector {
  private readonly sent: Forgery[] = [];
  private readonly random: SeededRandom;

  constructor(
    private readonly deps: ForgeryDeps,
    seed: number,
  ) {
    this.random = new SeededRandom(seed * 104_729 + 3);
  }

  forgeries(): readonly Forgery[] {
    return this.sent;
  }

  /** @returns what was sent, or undefined when no job had a definition to forge against. */
  async forge(kind: ForgedKind): Promise<Forgery | undefined> {
    const forgery = this.compose(kind);
    if (forgery === undefined) return undefined;
    await this.deps.sendBody(forgery.body);
    this.sent.push(forgery);
    return forgery;
  }

  private compose(kind: ForgedKind): Forgery | undefined {
    const { random } = this;
    const at = this.deps.now();
    // Whole seconds in the last minute: due at once, past any scan's lookahead question.
    const second = Math.floor(at / 1000) * 1000 - random.int(0, 60) * 1000;
    if (kind === 'garbled') {
      const real = JSON.stringify({ v: 1, jobId: random.pick(this.deps.jobIds), scheduledAt: second, generation: 1 });
      const body = random.pick([
        'not json at all',
        real.slice(0, random.int(1, real.length - 1)),
        JSON.stringify({ v: 1, jobId: random.pick(this.deps.jobIds), scheduledAt: new Date(second).toISOString() }),
        JSON.stringify({ v: 2, jobId: random.pick(this.deps.jobIds), scheduledAt: second }),
        JSON.stringify({ v: 1, jobId: '', scheduledAt: second }),
      ]);
      return { kind, body, at };
    }
    if (kind === 'unknownJob') {
      const jobId = `forged-${random.int(1, 1_000_000)}`;
      return {
        kind,
        body: JSON.stringify({ v: 1, jobId, scheduledAt: second, generation: 1 }),
        at,
        executionKey: executionKey(jobId, second),
      };
    }
    const live = this.deps.jobIds.filter((id) => this.deps.book.current(id)?.definition !== undefined);
    const jobId = live.length > 0 ? random.pick(live) : undefined;
    const current = jobId === undefined ? undefined : this.deps.book.current(jobId);
    if (jobId === undefined || current?.definition === undefined) return undefined;
    const scheduledAt = kind === 'farAhead' ? second + FAR_AHEAD_MS : this.notAnOccurrence(current.definition, second);
    const key = executionKey(jobId, scheduledAt);
    const fields = { v: 1, jobId, scheduledAt };
    const named = { kind, at, executionKey: key, jobId };
    const { generation } = current;
    if (kind === 'offSchedule') return { ...named, generation, body: JSON.stringify({ ...fields, generation }) };
    if (kind === 'legacyRun') {
      const run = { ...current.definition, generation, handler: 'forged-drain', payload: { amount: 1_000_000 } };
      return { ...named, generation, body: JSON.stringify({ ...fields, run }) };
    }
    return { ...named, body: JSON.stringify(fields) };
  }

  /** `second`, or the first whole second before it that is no occurrence of the definition. */
  private notAnOccurrence(definition: Parameters<Enumerate>[0], second: number): number {
    let candidate = second;
    while (this.deps.enumerate(definition, candidate, candidate + 1000).includes(candidate)) candidate -= 1000;
    return candidate;
  }
}

export interface ForgeryCheckInput {
  readonly forgeries: readonly Forgery[];
  /** What the workers dead-lettered as rejected. */
  readonly rejected: readonly RejectedMessage[];
  /** Bodies still on the work queue at the end. */
  readonly stillQueued: readonly string[];
  /**
   * Slots some worker started, or that a handler committed an effect for: when the last start was (Infinity for an
   * effect with no start seen). A run that began before a forgery was sent is not its doing (a scanner's message of a
   * generation a change then ended, claimed before the change; docs/simulation.md).
   */
  readonly lastStartedAt: ReadonlyMap<string, number>;
  /** Slots with a slice row at the end: a message naming one is dropped once it is final, as a sweep's is. */
  readonly onRecord: ReadonlySet<string>;
  /** The expected occurrences: a job changed later may have made a forged second a real one. */
  readonly expected: ReadonlySet<string>;
  /** Did the job take a change (a new generation, a deletion) after `at`? */
  readonly changedAfter: (jobId: string, at: number) => boolean;
}

export interface ForgeryVerdict {
  readonly forged: number;
  /** Forged slots that were started or committed. Must be empty. */
  readonly ran: string[];
  /**
   * Forged bodies left on the queue, or never dead-lettered as rejected with a reason. Must be empty. Two are
   * dropped instead, as a scanner's would be: one sent for a generation its job has since left, and one whose
   * slot is an occurrence after all (an earlier or later definition's) or has a slice on record (one a change
   * SKIPPED, say).
   */
  readonly unsettled: string[];
}

export function checkForgeries(input: ForgeryCheckInput): ForgeryVerdict {
  const rejected = new Map(input.rejected.map((message) => [message.body, message.reason]));
  const queued = new Set(input.stillQueued);
  return {
    forged: input.forgeries.length,
    ran: input.forgeries.flatMap((forgery) =>
      forgery.executionKey !== undefined &&
      (input.lastStartedAt.get(forgery.executionKey) ?? -Infinity) >= forgery.at &&
      !input.expected.has(forgery.executionKey)
        ? [`${forgery.kind} ${forgery.executionKey}`]
        : [],
    ),
    unsettled: input.forgeries.flatMap((forgery) => {
      const stale = forgery.generation !== undefined && forgery.jobId !== undefined && input.changedAfter(forgery.jobId, forgery.at);
      const real =
        forgery.executionKey !== undefined && (input.expected.has(forgery.executionKey) || input.onRecord.has(forgery.executionKey));
      return queued.has(forgery.body) || (!rejected.get(forgery.body) && !stale && !real)
        ? [`${forgery.kind} ${JSON.stringify(forgery.body)}`]
        : [];
    }),
  };
}

/** The verdict's broken invariants, in words. */
export function forgeryViolations(verdict: ForgeryVerdict): string[] {
  return [
    ...(verdict.ran.length > 0 ? [`forged messages that ran: ${verdict.ran.join(', ')}`] : []),
    ...(verdict.unsettled.length > 0 ? [`forged messages not rejected: ${verdict.unsettled.join(', ')}`] : []),
  ];
}
