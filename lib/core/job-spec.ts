/**
 * What a job is, and the one place its input is validated. Every write path
 * (CLI, API, the CDK custom resource) goes through {@link parseJobSpec}, so a
 * bad cron or time zone is refused with the field and value named before
 * anything is stored.
 */
import { z } from 'zod';
import { InvalidJobSpecError } from './errors.ts';
import { DEFAULT_DST_POLICY, scheduleOf, validateSchedule, type DstPolicy } from './schedule.ts';
import { scheduleKindOf } from './schedule-kinds.ts';
import { codePointName, refusedCharacter } from './sqs-body.ts';
import { DEFAULT_START_PRECISION, START_PRECISIONS, type StartPrecision } from './start-precision.ts';

/** Largest JSON payload a job may carry; it is copied onto every slice. */
export const MAX_PAYLOAD_BYTES = 16 * 1024;

export interface JobPolicies {
  /** Lease a claim holds before a standby may take over. @default 4000 */
  readonly leaseMs: number;
  /** How often the lease is renewed. At most half the lease. @default 1000 */
  readonly heartbeatMs: number;
  /** Attempts before the slice goes DEAD (a crash takeover counts). @default 3 */
  readonly maxAttempts: number;
  /** Handler run time before `ctx.signal` aborts. @default 60000 */
  readonly timeoutMs: number;
  /** First retry backoff ceiling. @default 1000 */
  readonly backoffBaseMs: number;
  /** Largest retry backoff ceiling. @default 300000 */
  readonly backoffMaxMs: number;
  /** Occurrences older than this after downtime are recorded missed, not run. @default 600000 */
  readonly catchUpWindowMs: number;
  /**
   * Which due occurrences inside the catch-up window run after downtime (a
   * scan that finds them already past): `all` of them, the `latest` only, or
   * `none`; each one not run is recorded SKIPPED with reason `misfire`.
   * Unset means `all` (stored jobs from before this policy keep their definition).
   * @default 'all'
   */
  readonly misfire?: MisfirePolicy;
  /**
   * What an occurrence due while the previous one still runs does
   * (overlap-policy.ts). Unset means `allow`.
   * @default 'allow'
   */
  readonly overlap?: OverlapPolicy;
  /**
   * Each occurrence starts this much later at most: a fixed offset in
   * `[0, jitterMs)` derived from the job id (jitter.ts). The slot keeps its
   * nominal execution key. Written `jitter: '90s'` on the job. @default 0
   */
  readonly jitterMs?: number;
  /**
   * A one-time `at(...)` job after its run: `complete` keeps it (it never
   * fires again, `cronfence jobs list` shows it completed), `delete` deletes
   * it once its slot is final. @default 'complete'
   */
  readonly afterOneTime?: AfterOneTime;
  /**
   * `exact`: the handler starts on its second (its message surfaces in the
   * second before and the worker waits for it); `within-second`: it starts
   * within about a second after, with no wait to pay for (start-precision.ts).
   * Stored only when not the default. @default 'exact'
   */
  readonly startPrecision?: StartPrecision;
}

export const MISFIRE_POLICIES = ['all', 'latest', 'none'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];
export const OVERLAP_POLICIES = ['allow', 'skip', 'bufferOne', 'bufferAll', 'replace'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export type AfterOneTime = 'complete' | 'delete';
/** Jitter beyond this would push a slice past what one SQS delay (15 min) covers from a scan's lookahead. */
export const MAX_JITTER_MS = 600_000;

export interface JobSpec {
  /** Letters, digits, `_`, `.`, `-`; no `:` (it separates the execution key). */
  readonly id: string;
  /** Cron (5 fields, or 6 with seconds), `rate(5 minutes)` or one-time `at(2026-12-24T18:00:00)`: schedule-kinds.ts. */
  readonly schedule: string;
  /** IANA time zone. @default "UTC" */
  readonly timeZone: string;
  /**
   * A local time that DST skips (`gap`) or repeats (`repeat`): shift it past
   * the gap or skip it; run it once (first occurrence) or twice.
   * @default { gap: 'shift', repeat: 'once' }
   */
  readonly dst: DstPolicy;
  /** Name of a handler registered with `defineJob`. */
  readonly handler: string;
  /** A disabled job is not sent by the scanners (its occurrences are not expected). @default true */
  readonly enabled: boolean;
  /** JSON object handed to the handler as `ctx.payload`. */
  readonly payload?: Record<string, unknown>;
  readonly policies: JobPolicies;
  /**
   * Who owns the definition: `cdk` (declared with `scheduler.addJob`, written by the stack's custom resource) or
   * `runtime` (created by `cronfence/client` or the CLI). A put from one owner never replaces the other's job.
   * @default "runtime"
   */
  readonly origin?: JobOrigin;
  /** A group name for bulk operations (`cronfence jobs pause --group payments`). */
  readonly group?: string;
}

export type JobOrigin = 'cdk' | 'runtime';

/**
 * Each attempt costs its message at least one receive, and a lost claim or an
 * early surfacing one more: at most 20 attempts keeps a live slice's message
 * well under the work queue's maxReceiveCount (50, lib/aws/schema.ts), so SQS
 * never redrives a message a retry still needs to the DLQ.
 */
export const MAX_ATTEMPTS = 20;

export const DEFAULT_POLICIES: JobPolicies = {
  leaseMs: 4000,
  heartbeatMs: 1000,
  maxAttempts: 3,
  timeoutMs: 60_000,
  backoffBaseMs: 1000,
  backoffMaxMs: 300_000,
  catchUpWindowMs: 600_000,
};

const int = (min: number, max: number) =>
  z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const policiesSchema = z
  .object({
    leaseMs: int(1000, 600_000).default(DEFAULT_POLICIES.leaseMs),
    heartbeatMs: int(100, 300_000).default(DEFAULT_POLICIES.heartbeatMs),
    maxAttempts: int(1, MAX_ATTEMPTS).default(DEFAULT_POLICIES.maxAttempts),
    // Lambda's own ceiling is 15 minutes.
    timeoutMs: int(1000, 900_000).default(DEFAULT_POLICIES.timeoutMs),
    backoffBaseMs: int(100, 3_600_000).default(DEFAULT_POLICIES.backoffBaseMs),
    // SQS cannot hide a message longer than 12 hours.
    backoffMaxMs: int(100, 43_200_000).default(DEFAULT_POLICIES.backoffMaxMs),
    catchUpWindowMs: int(0, 7 * 86_400_000).default(DEFAULT_POLICIES.catchUpWindowMs),
    // No defaults: a job stored before these policies existed compares equal to its re-put spec.
    misfire: z.enum(MISFIRE_POLICIES, { error: 'must be "all", "latest" or "none"' }).optional(),
    overlap: z.enum(OVERLAP_POLICIES, { error: 'must be "allow", "skip", "bufferOne", "bufferAll" or "replace"' }).optional(),
    jitterMs: int(0, MAX_JITTER_MS).optional(),
    afterOneTime: z.enum(['complete', 'delete'], { error: 'must be "complete" or "delete"' }).optional(),
    startPrecision: z.enum(START_PRECISIONS, { error: 'must be "exact" or "within-second"' }).optional(),
  })
  .strict();

const dstSchema = z
  .object(
    {
      gap: z
        .enum(['shift', 'skip'], { error: 'must be "shift" (run at the wall time moved past the gap) or "skip"' })
        .default(DEFAULT_DST_POLICY.gap),
      repeat: z.enum(['once', 'twice'], { error: 'must be "once" (the first occurrence) or "twice"' }).default(DEFAULT_DST_POLICY.repeat),
    },
    { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object like {"gap": "shift", "repeat": "once"}' : undefined) },
  )
  .strict();

const jobSchema = z
  .object({
    id: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(128, 'must be at most 128 characters')
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'only letters, digits, "_", "." and "-", starting with a letter or digit'),
    schedule: z.string({ error: 'must be a cron, rate(...) or at(...) string' }).min(1, 'must not be empty'),
    timeZone: z.string({ error: 'must be an IANA time zone' }).default('UTC'),
    dst: dstSchema.default(DEFAULT_DST_POLICY),
    handler: z.string({ error: 'must be a handler name' }).min(1, 'must not be empty'),
    enabled: z.boolean({ error: 'must be true or false' }).default(true),
    payload: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).optional(),
    policies: policiesSchema.default(DEFAULT_POLICIES),
    origin: z.enum(['cdk', 'runtime'], { error: 'must be "cdk" or "runtime"' }).default('runtime'),
    group: z
      .string({ error: 'must be a group name' })
      .max(64, 'must be at most 64 characters')
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'only letters, digits, "_", "." and "-", starting with a letter or digit')
      .optional(),
    /** Sugar for `policies.jitterMs`: "90s", "2m", "500ms" or milliseconds. */
    jitter: z.union([z.string(), z.number()], { error: 'must be a duration like "90s" or a number of milliseconds' }).optional(),
  })
  .strict();

export type JobSpecInput = z.input<typeof jobSchema>;

export interface ParseJobSpecOptions {
  /** Handler names that exist; when given, an unknown `handler` is refused. */
  readonly knownHandlers?: readonly string[];
}

/**
 * Validates and normalises a job definition (defaults filled in).
 * @throws {InvalidJobSpecError} naming the first bad field and its value.
 */
export function parseJobSpec(input: unknown, options: ParseJobSpecOptions = {}): JobSpec {
  const parsed = jobSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String) ?? [];
    throw new InvalidJobSpecError(path.join('.') || '(job)', valueAt(input, path), issue?.message ?? 'invalid');
  }
  const { jitter, ...parsedSpec } = parsed.data;
  const { startPrecision, ...policies } = parsedSpec.policies;
  const spec: JobSpec = {
    ...parsedSpec,
    policies: {
      ...policies,
      ...(jitter !== undefined && { jitterMs: jitterMsOf(jitter, policies.jitterMs) }),
      // The default is left out of the record: an explicit 'exact' and none are the same definition.
      ...(startPrecision !== undefined && startPrecision !== DEFAULT_START_PRECISION && { startPrecision }),
    },
  };
  validateSchedule(scheduleOf(spec));
  if (spec.policies.afterOneTime === 'delete' && scheduleKindOf(spec.schedule) !== 'at') {
    throw new InvalidJobSpecError(
      'policies.afterOneTime',
      'delete',
      `only a one-time at(...) schedule can delete itself; ${JSON.stringify(spec.schedule)} repeats`,
    );
  }
  const { leaseMs, heartbeatMs, backoffBaseMs, backoffMaxMs } = spec.policies;
  if (heartbeatMs * 2 > leaseMs) {
    throw new InvalidJobSpecError(
      'policies.heartbeatMs',
      heartbeatMs,
      `must be at most half of policies.leaseMs (${leaseMs}) so one late heartbeat does not lose the lease`,
    );
  }
  if (backoffMaxMs < backoffBaseMs) {
    throw new InvalidJobSpecError('policies.backoffMaxMs', backoffMaxMs, `must be at least policies.backoffBaseMs (${backoffBaseMs})`);
  }
  if (options.knownHandlers && !options.knownHandlers.includes(spec.handler)) {
    throw new InvalidJobSpecError(
      'handler',
      spec.handler,
      `no handler of that name is registered (known: ${options.knownHandlers.join(', ') || 'none'})`,
    );
  }
  if (spec.payload !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(spec.payload), 'utf8');
    if (bytes > MAX_PAYLOAD_BYTES) {
      throw new InvalidJobSpecError('payload', `${bytes} bytes`, `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON`);
    }
  }
  assertSendable(spec);
  return spec;
}

/**
 * Refuses a character outside SQS's ranges (sqs-body.ts) in the handler name
 * or anywhere in the payload. A work message names only the slot now, but a
 * scanner of the previous release (during a rolling upgrade) still sends the
 * definition in its message, and such a row would stop its sends. The id's
 * own rules keep a work message far under SQS's 256 KiB. @throws {InvalidJobSpecError} naming the field.
 */
function assertSendable(spec: JobSpec): void {
  for (const [field, text] of textsOf({ handler: spec.handler, ...(spec.payload && { payload: spec.payload }) }, '')) {
    // As JSON, the form the message carries it in: a control character is escaped there, U+FFFF is not.
    const refused = refusedCharacter(JSON.stringify(text));
    if (refused !== undefined) {
      throw new InvalidJobSpecError(
        field,
        showRefused(text),
        `holds ${codePointName(refused)}, a character SQS refuses in a message (allowed: tab, newline, carriage return, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF)`,
      );
    }
  }
}

/** Every string of `value` (object keys too), with the field it is at (`payload.items.2`; a key as `payload.items[key]`). */
function* textsOf(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (const [index, item] of value.entries()) yield* textsOf(item, `${path}.${index}`);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const at = path === '' ? key : `${path}.${key}`;
      yield [`${path}[key]`, key];
      yield* textsOf(item, at);
    }
  }
}

/** The text with each refused character written as its code point, so the message itself can be printed and sent. */
function showRefused(text: string): string {
  return [...text]
    .map((char) => (refusedCharacter(JSON.stringify(char)) === undefined ? char : `<${codePointName(char.codePointAt(0) as number)}>`))
    .join('');
}

/** `jitter: "90s"` as milliseconds. @throws {InvalidJobSpecError} naming `jitter`. */
function jitterMsOf(jitter: string | number, fromPolicies: number | undefined): number {
  const ms = typeof jitter === 'number' ? jitter : parseDurationMs(jitter);
  if (ms === undefined || !Number.isInteger(ms) || ms < 0 || ms > MAX_JITTER_MS) {
    throw new InvalidJobSpecError('jitter', jitter, `must be a duration from 0 to ${MAX_JITTER_MS / 1000}s, like "90s", "2m" or "500ms"`);
  }
  if (fromPolicies !== undefined && fromPolicies !== ms) {
    throw new InvalidJobSpecError('jitter', jitter, `disagrees with policies.jitterMs (${fromPolicies}); give one of them`);
  }
  return ms;
}

const DURATION = /^(\d+)\s*(ms|s|m|h)$/;
const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function parseDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  return match ? Number(match[1]) * (DURATION_UNIT_MS[match[2] as string] as number) : undefined;
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
