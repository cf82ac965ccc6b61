/**
 * One scan window in a process of its own, so its memory is the scanner's
 * alone: scans every shard once, in turn, and reports to the parent each
 * shard's wall time and scan report, the requests and items its meter saw,
 * and the process's resident memory before and at its peak.
 *
 *   node --import tsx tools/bench/scan-probe.ts   (env: CRONFENCE_PREFIX, CRONFENCE_SHARDS, AWS_*)
 */
import { destroyAwsClients } from '../../lib/aws/clients.ts';
import type { ScanReport } from '../../lib/engine/scanner.ts';
import { createRuntime } from '../../lib/lambda/wiring.ts';
import { RequestMeter, type MeterSnapshot } from '../meter/request-meter.ts';

export interface ScanProbeResult {
  readonly shards: { shard: number; ms: number; report: ScanReport }[];
  readonly meter: MeterSnapshot;
  /** Resident set size once loaded, before scanning (bytes). */
  readonly rssBeforeBytes: number;
  /** Peak resident set size of the process (bytes). */
  readonly peakRssBytes: number;
  /** Largest V8 heap in use seen after a shard (bytes). */
  readonly peakHeapUsedBytes: number;
  /** What the scans reported failing (the first few), for a level whose scan sent less than was due. */
  readonly errors: string[];
}

const isChild = /scan-probe\.[jt]s$/.test(process.argv[1] ?? '') && typeof process.send === 'function';
if (isChild) {
  const errors: string[] = [];
  const runtime = createRuntime({ onError: (error, context) => void (errors.length < 3 && errors.push(`${context}: ${String(error)}`)) });
  const meter = new RequestMeter(runtime.config).attach(runtime.clients);
  const scanner = runtime.scanner('bench-scan-probe');
  global.gc?.();
  const rssBeforeBytes = process.memoryUsage().rss;
  let peakHeapUsedBytes = process.memoryUsage().heapUsed;
  const shards: ScanProbeResult['shards'] = [];
  for (let shard = 0; shard < runtime.config.shardCount; shard++) {
    const started = performance.now();
    const report = await scanner.scanShard(shard);
    shards.push({ shard, ms: performance.now() - started, report });
    peakHeapUsedBytes = Math.max(peakHeapUsedBytes, process.memoryUsage().heapUsed);
  }
  await runtime.bus.flush();
  destroyAwsClients(runtime.clients);
  const result: ScanProbeResult = {
    shards,
    meter: meter.snapshot(),
    rssBeforeBytes,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    peakHeapUsedBytes,
    errors,
  };
  process.send?.({ kind: 'result', result }, () => process.exit(0));
}
