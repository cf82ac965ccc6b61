/**
 * The drill's expected occurrences, expanded straight from cron-parser and
 * not through lib/core/schedule.ts, so a bug in our own enumeration cannot
 * hide a missed slice from the check.
 */
import { CronExpressionParser } from 'cron-parser';
import { executionKey } from '../core/execution-key.ts';
import type { StoredJob } from '../core/ports.ts';

export function expectedExecutionKeys(jobs: readonly StoredJob[], fromMs: number, toMs: number): string[] {
  const keys: string[] = [];
  for (const job of jobs) {
    const start = Math.max(fromMs, job.createdAt);
    const expression = CronExpressionParser.parse(job.schedule, { currentDate: new Date(start - 1), tz: job.timeZone });
    for (;;) {
      const at = expression.next().getTime();
      if (at >= toMs) break;
      keys.push(executionKey(job.id, at));
    }
  }
  return keys;
}
