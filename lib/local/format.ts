/** Terminal rendering of lifecycle events and summaries. */
import type { LifecycleEvent } from '../core/events.ts';

const OUTCOMES = new Set(['committed', 'failed', 'dead', 'fenced_out', 'missed', 'skipped']);

export function isOutcome(event: LifecycleEvent): boolean {
  return OUTCOMES.has(event.type);
}

/** The job column's width for these job ids: the longest, and never narrower than the header's default. */
export function jobColumnWidth(jobIds: readonly string[]): number {
  return Math.max(22, ...jobIds.map((id) => id.length));
}

/** The header over {@link formatOutcome}'s lines, its job column `jobWidth` wide. */
export function outcomeHeader(jobWidth: number): string {
  return `time          ${'job'.padEnd(jobWidth)}  scheduled             start lag     worker     fence     outcome`;
}

/** One readable line per execution outcome: time, job, scheduled time, start lag, worker, fence, outcome. */
export function formatOutcome(event: LifecycleEvent, startLagMs: number | undefined, jobWidth: number): string {
  const time = event.at.slice(11, 23);
  const lag = startLagMs === undefined ? '      -' : `${String(startLagMs).padStart(5)} ms`;
  const extra = event.type === 'missed' ? ` (${event.count} occurrences)` : event.error ? `  ${event.error}` : '';
  return `${time}  ${event.jobId.padEnd(jobWidth)}  ${event.scheduledAt}  lag ${lag}  ${event.worker.padEnd(10)} fence ${String(event.fence).padStart(2)}  ${event.type}${extra}`;
}

/** A dead-man's switch finding: the job has had no final slot since `silentSince`, and its deadline passed. */
export function formatStale(event: LifecycleEvent): string {
  return `${event.at.slice(11, 23)}  STALE ${event.jobId}: no final slot since ${event.silentSince}, due by ${event.deadline} (dead-man's switch)`;
}

export function table(rows: readonly (readonly (string | number)[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, String(cell).length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => String(cell).padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function ms(value: number): string {
  return Number.isNaN(value) ? '-' : `${Math.round(value)} ms`;
}
