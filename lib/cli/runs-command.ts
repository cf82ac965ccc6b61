/** `cronfence runs <jobId>`: a job's slices beside their ledger records. */
import { Command } from 'commander';
import { CronfenceError } from '../core/errors.ts';
import { executionKey, isoInstant, isoSecond } from '../core/execution-key.ts';
import type { JobRepository } from '../engine/job-repository.ts';
import type { Slice } from '../core/slice.ts';
import { table } from '../local/format.ts';
import { parseTimeAgo } from './time-flags.ts';

export function runsCommand(repository: () => JobRepository, write: (line: string) => void): Command {
  return new Command('runs')
    .description("a job's slices (status, fence, owner, attempts) and ledger entries")
    .argument('<jobId>')
    .option('--since <time>', 'ISO time or a duration ago like 10m, 2h', (value) => parseTimeAgo(value), Date.now() - 3_600_000)
    .option('--json', 'one JSON object per slice')
    .action(async (jobId: string, flags: { since: number; json?: boolean }) => {
      const repo = repository();
      const [slices, ledger] = await Promise.all([repo.slicesOf(jobId, flags.since), repo.ledgerOf(jobId, flags.since)]);
      // Nothing to show and no such job: most likely a typo, not an idle job (a deleted job's history still shows).
      if (slices.length === 0 && (await repo.get(jobId)) === undefined) {
        throw new CronfenceError(
          `no job ${JSON.stringify(jobId)}, and no slices of it since ${new Date(flags.since).toISOString()} (cronfence jobs list shows the jobs there are)`,
        );
      }
      const byKey = new Map(ledger.map((record) => [record.executionKey, record]));
      const rows = slices.map((slice) => ({ slice, ledger: byKey.get(executionKey(slice.jobId, slice.scheduledAt)) }));
      if (flags.json) {
        for (const { slice, ledger: record } of rows)
          write(JSON.stringify({ executionKey: executionKey(slice.jobId, slice.scheduledAt), ...slice, ledger: record ?? null }));
        return;
      }
      write(
        table([
          [
            'scheduled (UTC)',
            'status',
            'fence',
            'owner',
            'attempts',
            'ledger',
            'ledger fence',
            'ledger owner',
            'by operator',
            'why / error',
          ],
          ...rows.map(({ slice, ledger: record }) => [
            isoInstant(slice.scheduledAt),
            slice.status,
            slice.fence,
            slice.owner ?? '-',
            slice.attempts,
            record?.outcome ?? '-',
            record?.fence ?? '-',
            record?.owner ?? '-',
            slice.operator
              ? `${slice.operator.action} by ${slice.operator.actor}${slice.operator.reason ? `: ${slice.operator.reason.slice(0, 40)}` : ''}`
              : '-',
            whyNotRun(slice) ?? slice.lastError?.slice(0, 60) ?? '',
          ]),
        ]),
      );
      write(`${slices.length} slices, ${ledger.length} ledger records since ${new Date(flags.since).toISOString()}`);
    });
}

/**
 * Why a SKIPPED or MISSED slot did not run: its reason, and for a range
 * record (an outage, a misfire policy) how many occurrences it stands for.
 */
export function whyNotRun(slice: Pick<Slice, 'status' | 'skipReason' | 'missedUntil' | 'missedCount'>): string | undefined {
  if (slice.status !== 'SKIPPED' && slice.status !== 'MISSED') return undefined;
  const reason = slice.status === 'MISSED' ? 'outside the catch-up window' : (slice.skipReason ?? 'no reason recorded');
  if (slice.missedUntil === undefined) return reason;
  return `${reason}: ${slice.missedCount ?? '?'} occurrences until ${isoSecond(slice.missedUntil)}`;
}
