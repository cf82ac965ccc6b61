/** `npm run sim`: the deterministic simulation (docs/simulation.md). */
import { Command, InvalidArgumentError, Option } from 'commander';
import { SingleBar } from 'cli-progress';
import { table } from '../../lib/local/format.ts';
import { wholeNumberAtLeast } from '../../lib/cli/jobs-command.ts';
import { DST_MODES, type DstMode } from '../chaos/dst.ts';
import { runSimulation, type SimReport } from '../sim/run-sim.ts';
import type { ProfileName } from '../sim/sim-network.ts';

const PROFILE_CHOICES = ['aws', 'loaded', 'both'] as const;

export function simCommand(write: (line: string) => void): Command {
  return new Command('sim')
    .description('run the real scanner, worker and lease code in virtual time under seeded faults, and check every history')
    .addOption(
      new Option('--seeds <range>', 'seeds to run, A-B (inclusive) or one seed')
        .argParser(parseSeedRange)
        .default({ from: 1, to: 10 }, '1-10'),
    )
    .addOption(
      new Option('--minutes <n>', 'simulated minutes per seed').argParser(wholeNumberAtLeast(1, 'nothing would be scheduled')).default(10),
    )
    .addOption(new Option('--profile <name>', 'request latency and fault model').choices(PROFILE_CHOICES).default('both'))
    .addOption(
      new Option('--jobs <n>', 'schedules (the drill’s mix)')
        .argParser(wholeNumberAtLeast(1, 'there would be nothing to check'))
        .default(40),
    )
    .addOption(new Option('--scanners <n>', 'scanner processes').argParser(wholeNumberAtLeast(1, 'nothing would create slices')).default(2))
    .addOption(new Option('--workers <n>', 'worker processes').argParser(wholeNumberAtLeast(2, 'a failover needs a standby')).default(3))
    .addOption(new Option('--dst <transition>', 'every window crosses this DST transition of America/New_York').choices(DST_MODES))
    .option('--no-input-faults', 'no poisoned job rows or forged messages (the fault set of seeds recorded before them)')
    .option('--no-settlement', 'no settlement job, outbox or dispatchers (the workload of seeds recorded before them)')
    .option('--out <dir>', 'where sim-report.json and the failing seeds’ histories go', '.cronfence/sim')
    .option('--histories', 'write every seed’s history, not only the failing ones’')
    .option('--json', 'print sim-report.json instead of the summary')
    .action(
      async (
        flags: {
          seeds: { from: number; to: number };
          minutes: number;
          profile: (typeof PROFILE_CHOICES)[number];
          jobs: number;
          scanners: number;
          workers: number;
          dst?: DstMode;
          inputFaults: boolean;
          settlement: boolean;
          out: string;
          histories?: boolean;
          json?: boolean;
        },
        command: Command,
      ) => {
        const profiles: ProfileName[] = flags.profile === 'both' ? ['aws', 'loaded'] : [flags.profile];
        const bar = process.stderr.isTTY
          ? new SingleBar({ format: 'sim [{bar}] {value}/{total} seeds | {failing} failing', hideCursor: true })
          : undefined;
        let failing = 0;
        bar?.start((flags.seeds.to - flags.seeds.from + 1) * profiles.length, 0, { failing });
        const report = await runSimulation({
          fromSeed: flags.seeds.from,
          toSeed: flags.seeds.to,
          minutes: flags.minutes,
          profiles,
          out: flags.out,
          histories: flags.histories === true,
          size: { jobs: flags.jobs, scanners: flags.scanners, workers: flags.workers },
          inputFaults: flags.inputFaults,
          settlement: flags.settlement,
          ...(flags.dst && { dst: flags.dst }),
          onSeed: (done, total, seed) => {
            const broke = seed.failing;
            if (broke) failing++;
            if (bar) bar.update(done, { failing });
            else if (done % 10 === 0 || done === total || broke) process.stderr.write(`sim: ${done}/${total} seeds, ${failing} failing\n`);
          },
        }).finally(() => bar?.stop());
        write(flags.json ? JSON.stringify(report, null, 2) : summary(report, flags.out));
        if (report.failingSeeds.length > 0)
          command.error(`${report.failingSeeds.length} seed(s) failed; replay one with: ${report.failingSeeds[0]?.replay}`, {
            exitCode: 1,
          });
      },
    );
}

function summary(report: SimReport, out: string): string {
  const ms = (value: number | null): string => (value === null ? '-' : `${value} ms`);
  const lines = [
    `simulated ${report.simulatedMinutes} minutes (${report.seeds.count} seeds × ${report.profiles.join(', ')}${report.dst ? `, across the ${report.dst} DST transition` : ''}) in ${report.wallSeconds} s: ${report.simulatedSecondsPerWallSecond} simulated s per wall s`,
    table([
      ['check', 'result', 'target'],
      ['duplicates', String(report.duplicates), '0'],
      ['missed', `${report.missed} of ${report.expectedOccurrences}`, '0'],
      ['healthy holders displaced', String(report.displaced), '0'],
      ['zombie commits accepted', String(report.zombieCommitsAccepted), '0'],
      ['fence violations', String(report.fenceViolations), '0'],
      [
        'poisoned rows, forged messages',
        `${report.poisonings} rows, ${report.forgedMessages} messages: ${report.inputViolations} broken`,
        'set aside, rejected: 0 broken',
      ],
      [
        'settlements (chunks, outbox)',
        `${report.settlements} settled, ${report.wiresAccepted} wires, ${report.settlementTakeovers} mid-batch takeovers: ${report.settlementViolations} broken`,
        'one row, one wire a merchant',
      ],
      [
        'bounded failover p50 / p99 / max',
        `${ms(report.failover.p50Ms)} / ${ms(report.failover.p99Ms)} / ${ms(report.failover.maxMs)} (${report.failover.count})`,
        'p99 < 4 s, max < 5 s',
      ],
      [
        'every failover p50 / p99 / max',
        `${ms(report.failoverAll.p50Ms)} / ${ms(report.failoverAll.p99Ms)} / ${ms(report.failoverAll.maxMs)} (${report.failoverAll.count})`,
        'bounded, and reported apart',
      ],
      [
        'reported apart (count, max)',
        Object.entries(report.failoverApart)
          .map(([kind, apart]) => `${kind} ${apart.count}, ${ms(apart.maxMs)}`)
          .join('; '),
        'a second fault on the path',
      ],
    ]),
    ...report.failingSeeds.flatMap((failing) => [
      `FAILING seed ${failing.seed} (${failing.profile}): ${failing.replay}`,
      ...failing.trace.map((line) => `  ${line}`),
    ]),
    `report: ${out}/sim-report.json`,
  ];
  return lines.join('\n');
}

function parseSeedRange(value: string): { from: number; to: number } {
  const match = /^(\d+)(?:-(\d+))?$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`--seeds must be A-B or one seed (whole numbers), got ${JSON.stringify(value)}`);
  const from = Number(match[1]);
  const to = Number(match[2] ?? match[1]);
  if (to < from) throw new InvalidArgumentError(`--seeds ${value}: the range ends before it starts`);
  return { from, to };
}
