/**
 * A job set aside: its stored row could not be planned (a schedule or time
 * zone that no longer parses, a field missing or of the wrong type) or its
 * work message would be refused by SQS (core/sqs-body.ts). The scan records
 * why, on the wheel (`!aside#<jobId>` in its shard's partition), emits a
 * `set_aside` event, and goes on with every other job: the job gets no next
 * wheel entry, so no scan meets it again until a change (put, resume, delete)
 * gives it a new generation. A record of an older generation than the job's
 * is history, not a current state (`isSetAsideNow`).
 */

export interface SetAsideJob {
  readonly jobId: string;
  /** The generation whose stored definition could not be planned or sent. */
  readonly generation: number;
  /** What was wrong, in words (the error's message). */
  readonly reason: string;
  /** The first occurrence not sent: the job's occurrences from here on wait for a change. */
  readonly from: number;
  /** When it was set aside, by the scanner's clock. */
  readonly at: number;
  /** The scanner that set it aside. */
  readonly by: string;
}

/** Whether `record` still describes the job: it is of the generation the job has now (or the job cannot be read). */
export function isSetAsideNow(record: SetAsideJob | undefined, job: { readonly generation: number } | undefined): boolean {
  return record !== undefined && (job === undefined || job.generation === record.generation);
}
