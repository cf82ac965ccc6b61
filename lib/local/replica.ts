/**
 * One local replica: a separate OS process running the scanner or worker
 * Lambda handler behind an SQS poller, so that killing it is a real kill.
 *
 *   node --import tsx lib/local/replica.ts worker|scanner <id> [--jobs <module>]
 *
 * A worker runs the handlers of the jobs module given with `--jobs` (a user's
 * `cronfence dev --jobs`), else the example handlers. The module is loaded
 * by this build's own module system (`require` in the CommonJS build, which
 * the fleet picks for a CommonJS module; `import` otherwise), so the module
 * and the engine share one copy of cronfence.
 *
 * Lifecycle events go to the parent over IPC (or stdout as JSON lines when
 * run alone); logs go to stdout through Powertools' logger. Under the chaos
 * drill (CRONFENCE_CHAOS set) the replica skews its clock, wraps its ports
 * and its SDK clients with the faults it was given, and reports each fault
 * and lease renewal.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { OffsetClock, systemClock } from '../core/clock.ts';
import type { EventSink, LifecycleEvent } from '../core/events.ts';
import { executionKey } from '../core/execution-key.ts';
import type { SliceStore } from '../core/ports.ts';
import { createAwsClients } from '../aws/clients.ts';
import { RequestCounter } from '../aws/request-counter.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { HangServer, injectClientFaults } from '../chaos/chaos-clients.ts';
import { chaosHandlers } from '../chaos/chaos-jobs.ts';
import { chaosSliceStore, chaosWorkQueue, type FaultReporter } from '../chaos/chaos-ports.ts';
import { chaosConfigFromEnv } from '../chaos/config.ts';
import { SeededRandom } from '../chaos/random.ts';
import type { HandlerRegistry } from '../engine/define-job.ts';
import { registry as exampleRegistry } from '../example-jobs/index.ts';
import { jobsFromModule, type JobsModuleExports } from '../lambda/jobs-module.ts';
import { BUILD } from '../package/package-files.ts';
import { createScannerHandler, createWorkerHandler } from '../lambda/handlers.ts';
import { replicaArgs, runUntilStopped, toParent } from './replica-process.ts';
import { SqsPoller } from './sqs-poller.ts';
import { createRuntime } from '../lambda/wiring.ts';

async function main(): Promise<never> {
  const { role, id, jobsModule } = replicaArgs('replica.ts');
  const events: EventSink = {
    emit(event: LifecycleEvent) {
      if (process.send) toParent({ kind: 'event', event });
      else process.stdout.write(`${JSON.stringify(event)}\n`);
    },
  };

  const chaos = chaosConfigFromEnv();
  const random = new SeededRandom((chaos?.seed ?? 0) ^ hash(id));
  const reportFault: FaultReporter = (fault) => toParent({ kind: 'fault', fault });
  /** Test-only hook: a module whose `wrapSliceStore` replaces the store (the drill's broken-engine check). */
  const storeWrapper = process.env.CRONFENCE_SLICE_STORE_WRAPPER
    ? ((await import(pathToFileURL(process.env.CRONFENCE_SLICE_STORE_WRAPPER).href)) as { wrapSliceStore: (store: SliceStore) => SliceStore })
    : undefined;

  const log = new Logger({ serviceName: `cronfence-${role}`, persistentKeys: { replica: id } });
  const clients = createAwsClients();
  if (chaos) {
    const hangServer = chaos.hangRate > 0 ? await new HangServer().start() : undefined;
    injectClientFaults(clients, { config: chaos, random, report: reportFault, hangServer });
  }
  const runtime = createRuntime({
    clients,
    clock: chaos?.clockOffsetMs ? new OffsetClock(chaos.clockOffsetMs) : systemClock,
    sinks: [events],
    onError: (error, context) => log.warn(context, { error: String(error) }),
    wrapSlices: (store) => {
      const inner = storeWrapper ? storeWrapper.wrapSliceStore(store) : store;
      return chaos ? chaosSliceStore(inner, chaos, random, reportFault) : inner;
    },
    wrapWorkQueue: (queue) => (chaos ? chaosWorkQueue(queue, chaos, random, reportFault) : queue),
    onLeaseRenewed: chaos ? (slice, fence, at) => toParent({ kind: 'renewed', executionKey: executionKey(slice.jobId, slice.scheduledAt), fence, at }) : undefined,
  });
  const registry: HandlerRegistry = jobsModule ? jobsFromModule(await loadModule(jobsModule), jobsModule).registry : exampleRegistry;
  if (chaos) for (const handler of chaosHandlers(runtime.config.prefix, random, true)) registry.register(handler);

  const requests = new RequestCounter().attach(runtime.clients);
  const handler =
    role === 'worker' ? createWorkerHandler(runtime, id, registry, log) : createScannerHandler(runtime, id, log, { scanBudgetMs: 20_000 });
  const url = await queueUrl(runtime.clients.sqs, role === 'worker' ? runtime.config.workQueueName : runtime.config.scanQueueName);
  const poller = new SqsPoller({
    sqs: runtime.clients.sqs,
    queueUrl: url,
    handler,
    // Several batches in flight, as several Lambda instances would have (a slow handler must not starve receives),
    // but bounded, as the event source's maximum concurrency bounds them: unbounded, a burst of claims queues
    // behind a slow table and every lease in the queue runs out together.
    maxConcurrentBatches: role === 'worker' ? 16 : 2,
    onError: (error) => log.warn('poll failed', { error: String(error) }),
  });

  toParent({ kind: 'ready', role, id });
  // Report this replica's AWS requests as it leaves.
  return runUntilStopped(poller, () => runtime.bus.flush(), () => ({ kind: 'requests', counts: requests.counts }));
}

/** `require` in the CommonJS build (tsx's loader, from the fork's --import, handles .ts there too), `import` otherwise. */
async function loadModule(file: string): Promise<JobsModuleExports> {
  const absolute = path.resolve(file);
  if (BUILD === 'cjs') return createRequire(import.meta.url)(absolute) as JobsModuleExports;
  return (await import(pathToFileURL(absolute).href)) as JobsModuleExports;
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0;
  return h;
}

main().catch((error: unknown) => {
  process.stderr.write(`replica failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
