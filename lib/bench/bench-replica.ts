/**
 * One bench replica: a separate OS process running the scanner or worker
 * Lambda handler behind an SQS poller, as lib/local/replica.ts does, with
 * a CapacityMeter on its clients. It answers `{ kind: 'meter' }` with its
 * meter snapshot, and reports each lifecycle event and each scan report.
 *
 *   node --import tsx lib/bench/bench-replica.ts worker|scanner <id>
 */
import type { EventSink, LifecycleEvent } from '../core/events.ts';
import { HandlerRegistry } from '../engine/define-job.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { createScannerHandler, createWorkerHandler, type HandlerLog } from '../lambda/handlers.ts';
import { replicaArgs, runUntilStopped, toParent } from '../local/replica-process.ts';
import { SqsPoller } from '../local/sqs-poller.ts';
import { createRuntime } from '../lambda/wiring.ts';
import { BENCH_HANDLERS } from './bench-jobs.ts';
import { CapacityMeter } from '../local/request-meter.ts';

const { role, id } = replicaArgs('bench-replica.ts');
// Only what the bench measures crosses the pipe: claimed events would double the IPC traffic for nothing.
const events: EventSink = {
  emit(event: LifecycleEvent) {
    if (event.type !== 'claimed') toParent({ kind: 'event', event });
  },
};
const log: HandlerLog = {
  error: (message, details) => process.stderr.write(`${id} ${message} ${JSON.stringify(details)}\n`),
  info: (message, details) => {
    if (message === 'scanned shard') toParent({ kind: 'scan', report: details, at: Date.now() });
  },
};

const runtime = createRuntime({ sinks: [events], onError: (error, context) => process.stderr.write(`${id} ${context}: ${String(error)}\n`) });
const meter = new CapacityMeter(runtime.config).attach(runtime.clients);
const registry = new HandlerRegistry(BENCH_HANDLERS);
const handler = role === 'worker' ? createWorkerHandler(runtime, id, registry, log) : createScannerHandler(runtime, id, log, { scanBudgetMs: 20_000 });
const url = await queueUrl(runtime.clients.sqs, role === 'worker' ? runtime.config.workQueueName : runtime.config.scanQueueName);
const poller = new SqsPoller({
  sqs: runtime.clients.sqs,
  queueUrl: url,
  handler,
  maxConcurrentBatches: role === 'worker' ? Number(process.env.CRONFENCE_BENCH_WORKER_BATCHES ?? 32) : 2,
  onError: (error) => process.stderr.write(`${id} poll failed: ${String(error)}\n`),
});

process.on('message', (message: { kind?: string }) => {
  if (message.kind === 'meter') toParent({ kind: 'meter', snapshot: meter.snapshot(), rss: process.memoryUsage().rss });
});
toParent({ kind: 'ready' });
// The last snapshot goes out as it leaves.
await runUntilStopped(poller, () => runtime.bus.flush(), () => ({ kind: 'meter', snapshot: meter.snapshot(), final: true }));
