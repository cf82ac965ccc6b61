/**
 * Every error cronfence throws on purpose. Callers branch with `instanceof`,
 * never on `name` strings. Expected outcomes of races (a lost claim, a stale
 * fence) are errors with a type so the loser can act on them.
 */
export class CronfenceError extends Error {
  override name = 'CronfenceError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An input field failed validation, named with its value; nothing was written. */
export abstract class InvalidFieldError extends CronfenceError {
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid ${field} ${formatValue(value)}: ${reason}`, options);
  }
}

/** A job definition field failed validation; nothing was written. */
export class InvalidJobSpecError extends InvalidFieldError {
  override name = 'InvalidJobSpecError';
}

/** A CronScheduler prop failed validation at synth, named with its value; nothing was deployed. */
export class InvalidSchedulerPropError extends InvalidFieldError {
  override name = 'InvalidSchedulerPropError';
}

/**
 * A stored job row that cannot be planned or sent (core/set-aside.ts): its
 * schedule or zone no longer parses, a field is missing, or SQS would refuse
 * its message. The scan sets the job aside and goes on with the others.
 */
export class UnplannableJobError extends CronfenceError {
  override name = 'UnplannableJobError';
  constructor(
    readonly jobId: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`job ${JSON.stringify(jobId)} cannot be planned or sent: ${reason}`, options);
  }
}

export class JobNotFoundError extends CronfenceError {
  override name = 'JobNotFoundError';
  constructor(readonly jobId: string) {
    super(`job ${JSON.stringify(jobId)} does not exist`);
  }
}

/** The job changed between read and write (version fence); re-read and retry. */
export class JobVersionConflictError extends CronfenceError {
  override name = 'JobVersionConflictError';
  constructor(
    readonly jobId: string,
    readonly expectedVersion: number,
    options?: { cause?: unknown },
  ) {
    super(`job ${JSON.stringify(jobId)} changed since version ${expectedVersion}`, options);
  }
}

/** The worker's fence is no longer the slice's fence: another worker took it over. */
export class LeaseLostError extends CronfenceError {
  override name = 'LeaseLostError';
  constructor(
    readonly executionKey: string,
    readonly fence: number,
    options?: { cause?: unknown },
  ) {
    super(`lease on ${executionKey} lost: fence ${fence} is stale`, options);
  }
}

/** A commit refused by the fence: a newer claim owns the slice, or it is already final. */
export class FencedOutError extends CronfenceError {
  override name = 'FencedOutError';
  constructor(
    readonly executionKey: string,
    readonly fence: number,
    options?: { cause?: unknown },
  ) {
    super(`commit of ${executionKey} with fence ${fence} refused: fenced out`, options);
  }
}

/** The handler ran past the job's timeout. */
export class JobTimeoutError extends CronfenceError {
  override name = 'JobTimeoutError';
  constructor(
    readonly executionKey: string,
    readonly timeoutMs: number,
  ) {
    super(`${executionKey} exceeded its timeout of ${timeoutMs} ms`);
  }
}

/** A queue message whose body is not a message cronfence sent. */
export class MalformedMessageError extends CronfenceError {
  override name = 'MalformedMessageError';
  constructor(
    readonly body: string,
    readonly reason: string,
  ) {
    super(`malformed message body ${formatValue(truncate(body, 200))}: ${reason}`);
  }
}

/**
 * A well-formed work message that can never run: it names a slice that does
 * not exist. Dead-lettered with the reason, never retried.
 */
export class UnrunnableMessageError extends CronfenceError {
  override name = 'UnrunnableMessageError';
  constructor(
    readonly body: string,
    readonly reason: string,
  ) {
    super(`work message ${formatValue(truncate(body, 200))} cannot run: ${reason}`);
  }
}

/** A table, queue or bus the configuration (or a handler's commit) names does not exist. */
export class MissingResourceError extends CronfenceError {
  override name = 'MissingResourceError';
  constructor(
    readonly kind: 'table' | 'queue' | 'bus',
    readonly resourceName: string,
    options?: { cause?: unknown; /** A table of the user's own, named in a commit: bootstrap would not create it. */ usersOwn?: boolean },
  ) {
    super(
      options?.usersOwn
        ? `${kind} ${JSON.stringify(resourceName)} named in the commit does not exist (it is one of your own tables, not cronfence's)`
        : `${kind} ${JSON.stringify(resourceName)} does not exist; run \`cronfence bootstrap\` (or deploy the CDK stack) first`,
      options,
    );
  }
}

/** A handler called `ctx.commit` a second time in one attempt (whatever became of the first call). */
export class AlreadyCommittedError extends CronfenceError {
  override name = 'AlreadyCommittedError';
  constructor(readonly executionKey: string) {
    super(`ctx.commit was already called for ${executionKey} in this attempt; call it once, with every write`);
  }
}

function formatValue(value: unknown): string {
  if (value === undefined) return '(missing)';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A condition on one of the handler's own commit writes failed; nothing was written. */
export class BusinessConditionFailedError extends CronfenceError {
  override name = 'BusinessConditionFailedError';
  constructor(
    readonly executionKey: string,
    /** Index into the writes passed to `ctx.commit`. */
    readonly writeIndex: number,
    options?: { cause?: unknown },
  ) {
    super(`commit of ${executionKey} refused: the condition of write #${writeIndex} failed`, options);
  }
}

/** More writes than one DynamoDB transaction holds. */
export class TooManyWritesError extends CronfenceError {
  override name = 'TooManyWritesError';
  constructor(
    readonly executionKey: string,
    readonly count: number,
    readonly max: number,
  ) {
    super(`commit of ${executionKey} has ${count} writes; at most ${max} fit beside the slice and ledger records`);
  }
}

/**
 * DynamoDB refused a write for now (throttled, a conflicting transaction, a
 * server error); nothing was written, and the same write may be sent again.
 */
export class StoreBusyError extends CronfenceError {
  override name = 'StoreBusyError';
  constructor(
    readonly operation: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(`${operation} refused for now (${code}); nothing was written`, options);
  }
}

/**
 * DynamoDB rejected a commit as invalid (a validation error such as an item
 * over 400 KB, an item collection over its size limit); nothing was written,
 * and sending it again would fail the same way.
 */
export class CommitRejectedError extends CronfenceError {
  override name = 'CommitRejectedError';
  constructor(
    readonly executionKey: string,
    readonly code: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`commit of ${executionKey} rejected (${code}): ${detail}; nothing was written`, options);
  }
}

/** The slice already ended with another outcome under this very claim (e.g. DEAD asked for, SUCCEEDED on record). */
export class OutcomeOnRecordError extends CronfenceError {
  override name = 'OutcomeOnRecordError';
  constructor(
    readonly executionKey: string,
    readonly recorded: 'SUCCEEDED' | 'DEAD',
    options?: { cause?: unknown },
  ) {
    super(`${executionKey} is already ${recorded} on record under this claim`, options);
  }
}

/** An operator request (trigger, backfill, pause) with a bad field; nothing was written. */
export class InvalidOperatorRequestError extends InvalidFieldError {
  override name = 'InvalidOperatorRequestError';
}

/** A write from one owner (the CDK stack, or code at run time) to a job the other owns; nothing was written. */
export class JobOwnershipError extends CronfenceError {
  override name = 'JobOwnershipError';
  constructor(
    readonly jobId: string,
    readonly owner: 'cdk' | 'runtime',
    readonly writer: 'cdk' | 'runtime',
  ) {
    super(
      owner === 'cdk'
        ? `job ${JSON.stringify(jobId)} is declared in the CDK stack (origin "cdk"); change it there, not at run time`
        : `job ${JSON.stringify(jobId)} was created at run time (origin "runtime"); the CDK stack does not own it`,
    );
  }
}

/** `createJob` of an id that already has a different job; nothing was written. */
export class JobExistsError extends CronfenceError {
  override name = 'JobExistsError';
  constructor(readonly jobId: string) {
    super(`job ${JSON.stringify(jobId)} already exists with another definition; use updateJob to change it`);
  }
}

/**
 * A chunked slot whose input changed between attempts in a way its committed
 * chunks cannot account for (lib/core/chunks.ts `ChunkOptions`). Every retry
 * would meet the same chunks: the slot goes DEAD at once, with this reason.
 */
export class ChunkInputChangedError extends CronfenceError {
  override name = 'ChunkInputChangedError';
  constructor(
    readonly executionKey: string,
    readonly chunk: number,
    readonly reason: string,
  ) {
    super(`chunk ${chunk} of ${executionKey}: ${reason}`);
  }
}

/** `ctx.commitChunk` was asked for something it cannot commit (a bad chunk number or request key, or after the final commit); nothing was written. */
export class InvalidChunkError extends CronfenceError {
  override name = 'InvalidChunkError';
  constructor(
    readonly executionKey: string,
    readonly chunk: number,
    readonly reason: string,
  ) {
    super(`chunk ${String(chunk)} of ${executionKey}: ${reason}`);
  }
}
