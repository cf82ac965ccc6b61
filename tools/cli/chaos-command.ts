/** `npm run chaos`: the fault drill (docs/chaos.md). */
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { SingleBar } from 'cli-progress';
import { DEFAULT_FAULT_RATES, FAULT_KINDS, parseFaultList, parseFaultRates, type FaultKind, type FaultRates } from '../chaos/config.ts';
import { runDrill } from '../chaos/drill.ts';
import type { DrillProgress } from '../chaos/drill-progress.ts';
import { DST_MODES, parseDstMode, type DstMode } from '../chaos/dst.ts';
import type { ChaosReport } from '../chaos/report.ts';
import { table } from '../../lib/local/format.ts';
import { parseInteger, wholeNumberAtLeast } from '../../lib/cli/jobs-command.ts';

const MIN_DURATION_S = 30;
/** The settlement fires every minute at :30: a shorter window may hold none. */
const MIN_SETTLEMENT_DURATION_S = 60;

export function chaosCommand(write: (line: string) => void): Command {
  return new Command('chaos')
    .description('run scanners and workers under injected faults and check the history for double commits, missed slices and slow failover')
    .addOption(new Option('--scanners <n>', 'scanner replicas').argParser(wholeNumberAtLeast(1, 'nothing would create slices')).default(3))
    .addOption(new Option('--workers <n>', 'worker replicas').argParser(wholeNumberAtLeast(2, 'a failover needs a standby')).default(4))
    .addOption(
      new Option('--jobs <n>', 'schedules (one in eight every few seconds, the rest every 30 s to 2 min)')
        .argParser(wholeNumberAtLeast(1, 'there would be nothing to check'))
        .default(100),
    )
    .addOption(
      new Option(
        '--duration <seconds>',
        `how long faults are injected (at least ${MIN_DURATION_S}; ${MIN_SETTLEMENT_DURATION_S} with --settlement)`,
      )
        .argParser(wholeNumberAtLeast(MIN_DURATION_S, 'the one-time policy jobs fire 25 s in, and their checks expect them run'))
        .default(90),
    )
    .addOption(new Option('--seed <n>', 'the same seed gives the same fault plan').argParser(parseInteger).default(1))
    .addOption(
      new Option('--faults <list>', `comma-separated, or "all": ${FAULT_KINDS.join(', ')}`)
        .argParser(asArgument(parseFaultList))
        .default([...FAULT_KINDS], 'all'),
    )
    .addOption(
      new Option(
        '--rates <list>',
        `override per-message, per-call or per-try probabilities, e.g. hang=0.01,throttle=0.05 (defaults: ${Object.entries(
          DEFAULT_FAULT_RATES,
        )
          .map(([name, rate]) => `${name}=${rate}`)
          .join(',')})`,
      ).argParser(asArgument(parseFaultRates)),
    )
    .addOption(
      new Option(
        '--dst [transition]',
        `offset every clock so the window crosses a DST transition of America/New_York: ${DST_MODES.join(' or ')} (alone: spring)`,
      ).argParser(asArgument((value: string) => parseDstMode(value))),
    )
    .option(
      '--settlement',
      'add the 1,200-merchant settlement (merchant-settlement-fast, every minute at :30) paying a mock bank through the outbox; its workers are killed and paused mid-batch',
    )
    .option('--out <dir>', 'where report.json, timeline.svg and events.jsonl go', '.cronfence/chaos')
    .option('--json', 'print report.json instead of the summary')
    .action(
      async (
        flags: {
          scanners: number;
          workers: number;
          jobs: number;
          duration: number;
          seed: number;
          faults: FaultKind[];
          rates?: Partial<FaultRates>;
          dst?: DstMode | true;
          settlement?: boolean;
          out: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        if (flags.settlement && flags.duration < MIN_SETTLEMENT_DURATION_S) {
          command.error(
            `error: option '--duration' ${flags.duration} is below ${MIN_SETTLEMENT_DURATION_S} with --settlement: the settlement fires once a minute, and a shorter window may hold none`,
          );
        }
        const bar = new SingleBar({
          format: 'chaos {phase} |{bar}| {value}/{total} s · {committed} committed · {faults} faults',
          stream: process.stderr,
          hideCursor: true,
        });
        // cli-progress draws only on a terminal; elsewhere (CI logs) each phase change is one line.
        const drawBar = !flags.json && process.stderr.isTTY;
        let lastPhase = '';
        if (drawBar) bar.start(flags.duration, 0, { phase: 'starting', committed: 0, faults: 0 });
        const outDir = path.resolve(flags.out);
        const { faults, rates } = flags;
        const dst = parseDstMode(flags.dst);
        const report = await runDrill({
          scanners: flags.scanners,
          workers: flags.workers,
          jobs: flags.jobs,
          durationSeconds: flags.duration,
          seed: flags.seed,
          faults,
          rates,
          dst,
          settlement: flags.settlement === true,
          outDir,
          onProgress: (progress: DrillProgress) => {
            if (drawBar) bar.update(Math.min(progress.elapsedSeconds, flags.duration), { ...progress });
            else if (!flags.json && progress.phase !== lastPhase) {
              process.stderr.write(
                `chaos: ${progress.phase} at ${progress.elapsedSeconds} s (${progress.committed} committed, ${progress.faults} faults)\n`,
              );
            }
            lastPhase = progress.phase;
          },
        });
        if (drawBar) bar.stop();
        if (flags.json) write(JSON.stringify(report, null, 2));
        else printSummary(report, outDir, write);
        if (report.violations.length > 0) process.exitCode = 1;
      },
    );
}

/** A parser whose RangeError becomes commander's own "invalid argument" message, naming the option. */
function asArgument<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (error) {
      if (error instanceof RangeError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** The settlement drill's lines: per occurrence, then its takeovers. */
function settlementRows(report: ChaosReport, ok: (pass: boolean) => string): (string | number)[][] {
  const settlement = report.settlement;
  if (!settlement) return [];
  const { merchants } = settlement;
  const rows: (string | number)[][] = settlement.occurrences.map((o) => [
    `settlement ${o.executionKey.split(':').slice(1).join(':')}`,
    `${o.status}; payouts ${o.payoutRows} (${o.duplicatePayouts} twice, ${o.missingPayouts} missing); wires ${o.acceptedWires} (${o.duplicateWires} twice, ${o.missingWires} missing); ` +
      `chunks ${o.chunksCommitted}, redone ${o.committedChunksRedone}, skipped by standby ${o.chunksSkippedByStandby}, zombie refused ${o.zombieChunksRefused}; faults mid-batch ${o.faultsMidBatch}, takeovers ${o.takeovers}`,
    ok(
      o.status === 'SUCCEEDED' &&
        o.payoutRows === merchants &&
        o.missingPayouts + o.duplicatePayouts + o.duplicateWires + o.missingWires + o.committedChunksRedone === 0 &&
        o.acceptedWires === merchants,
    ),
  ]);
  const t = settlement.totals;
  rows.push(['settlement committed chunks redone after a takeover', t.committedChunksRedone, ok(t.committedChunksRedone === 0)]);
  rows.push([
    'settlement duplicate payouts / duplicate wires / missing',
    `${t.duplicatePayouts} / ${t.duplicateWires} / ${t.missingPayouts + t.missingWires}`,
    ok(t.duplicatePayouts + t.duplicateWires + t.missingPayouts + t.missingWires === 0),
  ]);
  rows.push([
    'settlement failover p50 / p99 / max',
    `${settlement.failover.p50Ms} / ${settlement.failover.p99Ms} / ${settlement.failover.maxMs} ms (n=${settlement.failover.count}); ${settlement.failoverFromFault.count - settlement.failover.count} more slowed by a throttled or hung request; from the kill or pause, all: max ${settlement.failoverFromFault.maxMs} ms`,
    ok(settlement.failover.maxMs < 5000),
  ]);
  rows.push([
    'settlement mock bank',
    `${settlement.bank.requests} requests, ${settlement.bank.replays} replays answered by key, ${settlement.bank.refused} refused (503)`,
    '',
  ]);
  return rows;
}

function poisonRows(report: ChaosReport, ok: (pass: boolean) => string): (string | number)[][] {
  const poison = report.poison;
  if (!poison) return [];
  const held = poison.neverSetAside.length + poison.setAsideAfterRepair.length + poison.unrepaired.length === 0;
  return [
    [
      'poisoned jobs set aside / repaired (bad rows mid-drill)',
      `${poison.poisonedSetAside} of ${poison.poisonedJobs} / ${poison.repaired}; ${poison.excused} occurrences just before a poisoning excused`,
      ok(held && poison.poisonedSetAside === poison.poisonedJobs),
    ],
  ];
}

function printSummary(report: ChaosReport, outDir: string, write: (line: string) => void): void {
  const ok = (pass: boolean): string => (pass ? 'ok' : 'BROKEN');
  write(
    table([
      ['check', 'result', ''],
      ['duplicates (execution keys committed twice)', report.duplicates, ok(report.duplicates === 0)],
      ['missed (expected occurrences not final)', `${report.missed} of ${report.expectedOccurrences}`, ok(report.missed === 0)],
      ['zombie commits rejected by the fence', report.zombieCommitsRejected, ''],
      ['zombie commits accepted', report.zombieCommitsAccepted, ok(report.zombieCommitsAccepted === 0)],
      ['overlaps (zombie ran past a takeover)', report.overlaps, ''],
      ['fence monotonicity violations', report.fenceViolations, ok(report.fenceViolations === 0)],
      ['healthy holders displaced (takeover while it renewed)', report.healthyHoldersDisplaced, ok(report.healthyHoldersDisplaced === 0)],
      ['committed then DEAD or dead-lettered', report.committedThenDead, ok(report.committedThenDead === 0)],
      ['SUCCEEDED without its business write', report.succeededWithoutWrites, ok(report.succeededWithoutWrites === 0)],
      ['skipped by a lifecycle change while pending', report.skippedByChange, ''],
      [
        'failover p50 / p99 / max',
        `${report.failover.p50Ms} / ${report.failover.p99Ms} / ${report.failover.maxMs} ms (n=${report.failover.count})`,
        ok(report.failover.maxMs < 5000),
      ],
      [
        'failover slowed by a throttled or hung request: p50 / max',
        `${report.failoverSlowedByAws.p50Ms} / ${report.failoverSlowedByAws.maxMs} ms (n=${report.failoverSlowedByAws.count})`,
        '',
      ],
      [
        'failover of a claim read after its own pause (fast takeover disarmed): p50 / max',
        `${report.failoverAfterPausedClaim.p50Ms} / ${report.failoverAfterPausedClaim.maxMs} ms (n=${report.failoverAfterPausedClaim.count})`,
        '',
      ],
      [
        'failover whose message another worker held when it was killed or paused: p50 / max',
        `${report.failoverAfterHolderOfMessageStopped.p50Ms} / ${report.failoverAfterHolderOfMessageStopped.maxMs} ms (n=${report.failoverAfterHolderOfMessageStopped.count})`,
        '',
      ],
      [
        'failover that waited for a poller of the one worker left, every other stopped: p50 / max',
        `${report.failoverAfterOthersStopped.p50Ms} / ${report.failoverAfterOthersStopped.maxMs} ms (n=${report.failoverAfterOthersStopped.count})`,
        '',
      ],
      ['claims overtaken before their handler started', report.overtakenClaims, ''],
      ['start lag p50 / p99 / max', `${report.startLag.p50Ms} / ${report.startLag.p99Ms} / ${report.startLag.maxMs} ms`, ''],
      ['final states', JSON.stringify(report.finalStates), ''],
      ...(report.settings.dst
        ? [['DST transition crossed', `${report.settings.dst.transition} (clocks ${report.settings.dst.clockOffsetMs} ms)`, '']]
        : []),
      ['faults injected', JSON.stringify(report.faults), ''],
      ...settlementRows(report, ok),
      ...poisonRows(report, ok),
    ]),
  );
  write(`report: ${path.join(outDir, 'report.json')}  picture: ${path.join(outDir, 'timeline.svg')}`);
  write(report.violations.length === 0 ? 'all invariants held' : `INVARIANTS BROKEN: ${report.violations.join('; ')}`);
}
