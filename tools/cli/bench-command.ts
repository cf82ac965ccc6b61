/** `npm run bench`: cost and throughput, measured (docs/bench.md). */
import path from 'node:path';
import { Command, Option } from 'commander';
import { SingleBar } from 'cli-progress';
import { InvalidJobSpecError } from '../../lib/core/errors.ts';
import { renderReport } from '../bench/report.ts';
import { runBench } from '../bench/run-bench.ts';
import { FULL_SIZES, QUICK_SIZES, type BenchSizes } from '../bench/sizes.ts';
import { parseInteger, wholeNumberAtLeast } from '../../lib/cli/jobs-command.ts';

interface BenchFlags {
  quick?: boolean;
  json?: boolean;
  out: string;
  schedules?: string;
  due?: number;
  burst?: number;
  sparse?: number;
  shards?: number;
  scanners?: number;
  workers?: number;
  workerBatches?: number;
}

export function benchCommand(write: (line: string) => void): Command {
  return new Command('bench')
    .description('measure density, a burst, the emulator ceiling, requests and dollars per execution, and a capacity plan')
    .option('--quick', 'small sizes: the CI smoke test (about a minute)')
    .option('--json', 'print report.json instead of the tables')
    .option('--out <dir>', 'where report.json, chart.svg and replicas.log go', '.cronfence/bench')
    .option('--schedules <list>', `registered schedules per density level, comma-separated (default ${FULL_SIZES.schedules.join(',')})`)
    .addOption(new Option('--due <n>', 'schedules due in the scanned window at each density level').argParser(parseInteger))
    .addOption(new Option('--burst <n>', `slices due in the same second (default ${FULL_SIZES.burst})`).argParser(parseInteger))
    .addOption(
      new Option(
        '--sparse <n>',
        `slices one a second, each its own worker invocation (default ${FULL_SIZES.sparse}; quick ${QUICK_SIZES.sparse})`,
      ).argParser(wholeNumberAtLeast(1, 'the sparse run needs a slice')),
    )
    .addOption(new Option('--shards <n>', `shards (default ${FULL_SIZES.shards})`).argParser(parseInteger))
    .addOption(new Option('--scanners <n>', 'scanner processes in the burst').argParser(parseInteger))
    .addOption(new Option('--workers <n>', 'worker processes in the burst').argParser(parseInteger))
    .addOption(
      new Option(
        '--worker-batches <n>',
        "SQS batches of 10 each worker process runs at once (like an event source's concurrency)",
      ).argParser(parseInteger),
    )
    .action(async (flags: BenchFlags) => {
      const base = flags.quick ? QUICK_SIZES : FULL_SIZES;
      const sizes: BenchSizes = {
        ...base,
        ...(flags.schedules !== undefined && { schedules: parseLevels(flags.schedules) }),
        ...(flags.due !== undefined && { duePerLevel: flags.due }),
        ...(flags.burst !== undefined && { burst: flags.burst }),
        ...(flags.sparse !== undefined && { sparse: flags.sparse }),
        ...(flags.shards !== undefined && { shards: flags.shards }),
        ...(flags.scanners !== undefined && { scanners: flags.scanners }),
        ...(flags.workers !== undefined && { workers: flags.workers }),
        ...(flags.workerBatches !== undefined && { workerBatches: flags.workerBatches }),
      };
      const outDir = path.resolve(flags.out);
      // cli-progress draws only on a terminal; elsewhere (CI logs) each phase change is one line.
      const drawBar = !flags.json && process.stderr.isTTY;
      const bar = new SingleBar({ format: 'bench {phase} |{bar}| {value}/{total}', stream: process.stderr, hideCursor: true });
      let lastPhase = '';
      const report = await runBench({
        quick: flags.quick ?? false,
        sizes,
        outDir,
        // The launcher's own lines; the emulator's stderr (moto's tracebacks of retried requests) stays out of the tables.
        log: flags.json ? undefined : (line) => void (line.startsWith('[emulator]') ? undefined : process.stderr.write(`  ${line}\n`)),
        onProgress: (phase, done, total) => {
          if (drawBar) {
            if (phase !== lastPhase) {
              if (lastPhase) bar.stop();
              bar.start(total, done, { phase });
            } else bar.update(done);
          } else if (!flags.json && phase !== lastPhase) process.stderr.write(`bench: ${phase} (${total})\n`);
          lastPhase = phase;
        },
      });
      if (drawBar && lastPhase) bar.stop();
      if (flags.json) write(JSON.stringify(report, null, 2));
      else {
        write(renderReport(report));
        write(`\nreport: ${path.join(outDir, 'report.json')}  chart: ${report.chart}`);
      }
    });
}

function parseLevels(text: string): number[] {
  const levels = text.split(',').map((part) => Number(part.trim()));
  if (levels.length === 0 || levels.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new InvalidJobSpecError('--schedules', text, 'must be whole numbers separated by commas, e.g. 10000,100000');
  }
  return [...levels].sort((a, b) => a - b);
}
