/**
 * What a job is, and the one place its input is validated. Every write path
 * (CLI, API, the CDK custom resource) goes through {@link parseJobSpec}, so a
 * bad cron or time zone is refused with the field and value named before
 * anything is stored.
 */
import { z } from 'zod';
import { InvalidJobSpecError } from './errors.ts';
import { DEFAULT_DST_POLICY, scheduleOf, validateSchedule, type DstPolicy } from './schedule.ts';

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
}

export interface JobSpec {
  /** Letters, digits, `_`, `.`, `-`; no `:` (it separates the execution key). */
  readonly id: string;
  /** Cron, 5 fields or 6 with seconds. */
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
  /** Paused jobs leave the due index. @default true */
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
  })
  .strict();

const dstSchema = z
  .object({
    gap: z.enum(['shift', 'skip'], { error: 'must be "shift" (run at the wall time moved past the gap) or "skip"' }).default(DEFAULT_DST_POLICY.gap),
    repeat: z.enum(['once', 'twice'], { error: 'must be "once" (the first occurrence) or "twice"' }).default(DEFAULT_DST_POLICY.repeat),
  }, { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object like {"gap": "shift", "repeat": "once"}' : undefined) })
  .strict();

const jobSchema = z
  .object({
    id: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(128, 'must be at most 128 characters')
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'only letters, digits, "_", "." and "-", starting with a letter or digit'),
    schedule: z.string({ error: 'must be a cron string' }).min(1, 'must not be empty'),
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
  const spec = parsed.data;
  validateSchedule(scheduleOf(spec));
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
  return spec;
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let current: unknown = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
