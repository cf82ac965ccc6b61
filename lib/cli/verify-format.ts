/** The human summary of `cronfence verify` (its `--json` is the AuditReport itself: docs/verify.md). */
import type { AuditReport } from '../core/audit.ts';
import type { VerifyReport } from '../aws/verify-installation.ts';
import { table } from '../local/format.ts';

/** Lines of each list shown; `--json` lists everything. */
const SHOWN = 20;

export function renderAuditReport(report: AuditReport & Partial<Pick<VerifyReport, 'deadMan'>>): string[] {
  const { window, jobs, expected, slices } = report;
  const lines = [
    `cronfence verify: ${window.since} .. ${window.until} (occurrences expected up to ${window.expectedUntil}; grace ${Math.round(window.graceMs / 1000)} s)`,
    table([
      [
        'jobs checked',
        `${jobs.checked} (${jobs.enabled} enabled, ${jobs.paused} paused, ${jobs.deleted} deleted, ${jobs.unknown} without a job item)`,
      ],
      [
        'expected occurrences',
        `${expected.occurrences}: ${Object.entries(expected.final)
          .map(([status, count]) => `${count} ${status}`)
          .join(', ')}; ${expected.pending} pending, ${expected.stuck} stuck, ${expected.missing} missing`,
      ],
      [
        'slices read',
        `${slices.total} (${
          Object.entries(slices.byStatus)
            .map(([status, count]) => `${count} ${status}`)
            .join(', ') || 'none'
        })`,
      ],
      ['ledger records', report.ledgerRecords],
      ...(report.effects > 0 ? [['business writes (--effects)', report.effects]] : []),
      ['start lag (claims)', lagLine(report)],
      ['late starts', `${report.lateSlots.length} over ${report.lateThresholdMs} ms`],
      ['MISSED slices', report.missed.length],
    ]),
  ];
  if (report.perJob.length > 0) lines.push('', ...section(perJobTable(report), report.perJob.length, 'jobs'));
  if (report.lateSlots.length > 0) {
    lines.push('', 'late starts (start lag of the last claim):');
    lines.push(
      ...section(
        table([
          ['execution key', 'lag', 'attempts', 'status'],
          ...report.lateSlots.slice(0, SHOWN).map((s) => [s.executionKey, `${s.lagMs} ms`, s.attempts, s.status]),
        ]),
        report.lateSlots.length,
        'late starts',
      ),
    );
  }
  if (report.deadMan !== undefined) lines.push('', ...deadManLines(report.deadMan));
  if (report.missed.length > 0)
    lines.push(
      '',
      'MISSED:',
      ...section(
        report.missed
          .slice(0, SHOWN)
          .map((key) => `  ${key}`)
          .join('\n'),
        report.missed.length,
        'MISSED slices',
      ),
    );
  for (const note of report.notes) lines.push(`note: ${note}`);
  if (report.capped.length > 0)
    lines.push(`note: stopped at ${report.occurrenceCap} occurrences for ${report.capped.join(', ')}: later ones were not checked`);
  lines.push('');
  if (report.outcome === 'nothing-checked') {
    lines.push(`NOTHING CHECKED (exit 3): ${report.nothingChecked ?? 'no occurrence was expected'}`);
    return lines;
  }
  if (report.violations.length === 0) {
    lines.push(
      'no violations: every expected occurrence has its slice, every slot ran its definition at an occurrence, every commit its one ledger record',
    );
    return lines;
  }
  const counts = Object.entries(report.violationCounts).filter(([, count]) => count > 0);
  lines.push(`VIOLATIONS: ${counts.map(([kind, count]) => `${count} ${kind}`).join(', ')}`);
  lines.push(
    ...section(
      table([['kind', 'execution key', 'detail'], ...report.violations.slice(0, SHOWN * 2).map((v) => [v.kind, v.executionKey, v.detail])]),
      report.violations.length,
      'violations',
      SHOWN * 2,
    ),
  );
  return lines;
}

/** The dead-man's switch: silent jobs are named, with since when and the deadline they passed. */
function deadManLines(deadMan: VerifyReport['deadMan']): string[] {
  const unjudged = deadMan.unjudged.map((job) => `  not judged: ${job.jobId}: ${job.reason}`);
  const head = `dead-man's switch (k = ${deadMan.factor}, at ${deadMan.at}): ${deadMan.stale.length} of ${deadMan.checked} active jobs stale`;
  if (deadMan.stale.length === 0) return [head, ...unjudged];
  const rows = deadMan.stale
    .slice(0, SHOWN)
    .map((job) => [
      job.jobId,
      new Date(job.silentSince).toISOString(),
      job.lastFinalAt === undefined ? 'never' : new Date(job.lastFinalAt).toISOString(),
      `${Math.round(job.intervalMs / 1000)} s`,
      new Date(job.deadline).toISOString(),
    ]);
  return [
    head,
    ...section(
      table([['STALE job', 'silent since', 'last final slot', 'interval', 'deadline passed'], ...rows]),
      deadMan.stale.length,
      'stale jobs',
    ),
    ...unjudged,
  ];
}

function lagLine(report: AuditReport): string {
  const { startLag } = report;
  if (startLag.count === 0) return 'no single-attempt starts';
  return `p50 ${startLag.p50Ms} ms, p99 ${startLag.p99Ms} ms, max ${startLag.maxMs} ms over ${startLag.count} single-attempt starts`;
}

function perJobTable(report: AuditReport): string {
  return table([
    ['job', 'state', 'expected from', 'expected', 'slices', 'violations'],
    // Jobs with violations first: with many jobs, those are the rows worth showing.
    ...[...report.perJob]
      .sort((a, b) => b.violations - a.violations || a.jobId.localeCompare(b.jobId))
      .slice(0, SHOWN)
      .map((job) => [
        job.jobId,
        job.state,
        job.expectedFrom ?? '-',
        `${job.expected}${job.capped ? ' (capped)' : ''}`,
        job.slices,
        job.violations,
      ]),
  ]);
}

/** A rendered list, and a line saying how many were left out. */
function section(rendered: string, total: number, what: string, shown = SHOWN): string[] {
  return total > shown ? [rendered, `… and ${total - shown} more ${what} (--json lists all)`] : [rendered];
}
