/**
 * One local replica: a separate OS process running the scanner or worker
 * Lambda handler behind an SQS poller, so that killing it is a real kill.
 *
 *   node --import tsx lib/runtime/replica.ts worker|scanner <id> [--clock-offset-ms N]
 *
 * Lifecycle events go to the parent over IPC (or stdout as JSON lines when
 * run alone); logs go to stdout through Powertools' logger.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { OffsetClock, systemClock } from '../core/clock.ts';
import type { EventSink, LifecycleEvent } from '../core/events.ts';
import { RequestCounter } from '../aws/request-counter.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { registry } from '../../functions/jobs/index.ts';
import { createScannerHandler, createWorkerHandler } from './handlers.ts';
import { SqsPoller } from './sqs-poller.ts';
import { createRuntime } from './wiring.ts';

const [role, id, ...rest] = process.argv.slice(2);
if ((role !== 'worker' && role !== 'scanner') || !id) {
  process.stderr.write('usage: replica.ts worker|scanner <id> [--clock-offset-ms N]\n');
  process.exit(2);
}
const offsetFlag = rest.indexOf('--clock-offset-ms');
const clockOffsetMs = offsetFlag >= 0 ? Number(rest[offsetFlag + 1]) : 0;

const toParent: EventSink = {
  emit(event: LifecycleEvent) {
    if (process.send) process.send({ kind: 'event', event });
    else process.stdout.write(`${JSON.stringify(event)}\n`);
  },
};

const log = new Logger({ serviceName: `cronfence-${role}`, persistentKeys: { replica: id } });
const runtime = createRuntime({
  clock: clockOffsetMs ? new OffsetClock(clockOffsetMs) : systemClock,
  sinks: [toParent],
  onError: (error, context) => log.warn(context, { error: String(error) }),
});
const requests = new RequestCounter().attach(runtime.clients);
const handler =
  role === 'worker' ? createWorkerHandler(runtime, id, registry, log) : createScannerHandler(runtime, id, log, { scanBudgetMs: 20_000 });
const url = await queueUrl(runtime.clients.sqs, role === 'worker' ? runtime.config.workQueueName : runtime.config.scanQueueName);
const poller = new SqsPoller({
  sqs: runtime.clients.sqs,
  queueUrl: url,
  handler,
  maxConcurrentBatches: role === 'worker' ? 8 : 2,
  onError: (error) => log.warn('poll failed', { error: String(error) }),
});

const stop = (): void => poller.stop();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
process.send?.({ kind: 'ready', role, id });
await poller.run();
await runtime.bus.flush();
// Report this replica's AWS requests, then leave once the message is out.
if (process.send && process.connected) {
  process.send({ kind: 'requests', counts: requests.counts }, () => process.exit(0));
} else {
  process.exit(0);
}
