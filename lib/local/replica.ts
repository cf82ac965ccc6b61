/**
 * One local replica: a separate OS process running the scanner or worker
 * Lambda handler behind an SQS poller, so that killing it is a real kill.
 * Every replica entry module calls runReplica with what differs between
 * them (the handlers, faults wrapped around the ports, the events that go
 * to the parent): lib/local/dev-replica.ts for `cronfence dev`,
 * tools/chaos/chaos-replica-entry.ts for the drill, tools/bench/bench-replica.ts
 * for the bench. The fleet (fleet.ts) forks the entry it is given:
 *
 *   node --import tsx <entry> worker|scanner <id> [--jobs <module>]
 *
 * The replica reports to its parent by typed IPC messages
 * (replica-messages.ts), or writes its lifecycle events to stdout as JSON
 * lines when run alone; its logs go to stdout through Powertools' logger.
 * A tool attached by the entry (the request meter, tools/meter) answers the
 * parent's requests and has a last word as the replica exits.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { systemClock } from '../core/clock.ts';
import type { EventSink, LifecycleEvent } from '../core/events.ts';
import { queueUrl } from '../aws/sqs/queue-urls.ts';
import { createAwsClients } from '../aws/clients.ts';
import { loadConfig, localConfig } from '../aws/config.ts';
import type { HandlerRegistry } from '../engine/define-job.ts';
import { createScannerHandler, createWorkerHandler } from '../lambda/handlers.ts';
import { createRuntime, type Runtime, type RuntimeOptions, type RuntimePorts } from '../lambda/wiring.ts';
import type { ParentMessage, ReplicaMessage, ReplicaRole, ToolMessage } from './replica-messages.ts';
import { PolledRecords } from './polled-records.ts';
import { SqsPoller } from './sqs-poller.ts';

export interface ReplicaArgs {
  readonly role: ReplicaRole;
  readonly id: string;
  /** `--jobs <module>`: the user's jobs module (`cronfence dev --jobs`). */
  readonly jobsModule?: string;
}

/** What a replica entry decides. */
export interface ReplicaPlan {
  /** The handlers a worker runs. */
  readonly handlers: HandlerRegistry;
  /** Clients, clock and port decorators (the chaos replica's faults and reports). */
  readonly runtime?: Pick<RuntimeOptions, 'clients' | 'clock' | 'decoratePorts'>;
  /** Which lifecycle events go to the parent. @default all of them */
  readonly forwards?: (event: LifecycleEvent) => boolean;
  /** A tool attached to the runtime once it is built (the request meter on its clients). @default none */
  readonly attach?: (runtime: Runtime) => ReplicaAttachment;
}

/** What a tool attached to a replica says to the parent. */
export interface ReplicaAttachment {
  /** Its answer to a parent's message, if the message is its own. */
  answer(message: ParentMessage): ToolMessage | undefined;
  /** Its last word, sent as the replica exits. */
  last(): ToolMessage;
}

/** An entry's plan, given its arguments and the channel to its parent. */
export type ReplicaSetup = (args: ReplicaArgs, toParent: (message: ReplicaMessage) => void) => ReplicaPlan | Promise<ReplicaPlan>;

/** After a stop, in-flight work gets this long; a handler stuck on a dead emulator must not keep the process alive. */
const STOP_GRACE_MS = 15_000;
/** Scan batches in flight per scanner replica. */
const SCANNER_BATCHES = 2;

/**
 * Runs the replica until SIGTERM, SIGINT or the parent's disconnect; a
 * replica that fails to start exits 1 with its error on stderr. (Not a
 * top-level await in the entries: the CommonJS build has none.)
 */
export function startReplica(entry: string, setup: ReplicaSetup): void {
  runReplica(entry, setup).catch((error: unknown) => {
    process.stderr.write(`replica failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}

async function runReplica(entry: string, setup: ReplicaSetup): Promise<never> {
  const args = replicaArgs(entry);
  const plan = await setup(args, toParent);
  const { role, id } = args;
  const forwards = plan.forwards ?? (() => true);
  const events: EventSink = {
    emit(event: LifecycleEvent) {
      if (!forwards(event)) return;
      if (process.send) toParent({ kind: 'event', event });
      else process.stdout.write(`${JSON.stringify(event)}\n`);
    },
  };
  const log = new Logger({ serviceName: `cronfence-${role}`, persistentKeys: { replica: id } });
  const clients = plan.runtime?.clients ?? createAwsClients();
  const config = loadConfig();
  const url = () => queueUrl(clients.sqs, role === 'worker' ? config.workQueueName : config.scanQueueName);
  // The poller is the handler's event source: since when it hid each record, and the deletes of those done early.
  const records = new PolledRecords(clients.sqs, url, onPollError(log), plan.runtime?.clock ?? systemClock);
  const decorate = plan.runtime?.decoratePorts ?? ((ports: RuntimePorts) => ports);
  const runtime = createRuntime({
    ...plan.runtime,
    clients,
    decoratePorts: (ports) => ({ ...decorate(ports), eventSource: records }),
    sinks: [events],
    onError: (error, context) => log.warn(context, { error: String(error) }),
  });
  const attachment = plan.attach?.(runtime);
  process.on('message', (message: ParentMessage) => {
    const answer = attachment?.answer(message);
    if (answer) toParent(answer);
  });
  const handler =
    role === 'worker'
      ? createWorkerHandler(runtime, id, plan.handlers, log)
      : createScannerHandler(runtime, id, log, {
          scanBudgetMs: runtime.config.scanBudgetMs,
          onScan: (report) => toParent({ kind: 'scan', report, at: runtime.clock.now() }),
        });
  const poller = new SqsPoller({
    sqs: runtime.clients.sqs,
    queueUrl: await url(),
    handler,
    records,
    // Several batches in flight, as several Lambda instances would have (a slow handler must not starve receives),
    // but bounded, as the event source's maximum concurrency bounds them: unbounded, a burst of claims queues
    // behind a slow table and every lease in the queue runs out together.
    maxConcurrentBatches: role === 'worker' ? localConfig().workerBatches : SCANNER_BATCHES,
    onError: onPollError(log),
    clock: runtime.clock,
  });
  toParent({ kind: 'ready', role, id });
  return runUntilStopped(poller, () => runtime.bus.flush(), attachment && (() => attachment.last()));
}

/** `<entry> worker|scanner <id> [--jobs <module>]`; exits 2 with the usage line otherwise. */
function replicaArgs(entry: string): ReplicaArgs {
  const [role, id, flag, jobsModule, ...rest] = process.argv.slice(2);
  const jobsOk = flag === undefined || (flag === '--jobs' && jobsModule !== undefined && rest.length === 0);
  if ((role !== 'worker' && role !== 'scanner') || !id || !jobsOk) {
    process.stderr.write(`usage: ${entry} worker|scanner <id> [--jobs <module>]\n`);
    process.exit(2);
  }
  return { role, id, ...(jobsModule !== undefined && { jobsModule }) };
}

function onPollError(log: Logger): (error: unknown) => void {
  return (error) => log.warn('poll failed', { error: String(error) });
}

function toParent(message: ReplicaMessage): void {
  if (process.send && process.connected) process.send(message);
}

/**
 * Polls until SIGTERM, SIGINT or the parent's disconnect (a drill, `cronfence
 * dev` or the bench gone: nobody would collect this replica's reports or stop
 * it), lets `beforeExit` run, then sends `last()`, if any, to the parent, if
 * there is one, and exits once it is out.
 */
async function runUntilStopped(poller: SqsPoller, beforeExit: () => Promise<void>, last?: () => ReplicaMessage): Promise<never> {
  const stop = (): void => {
    poller.stop();
    setTimeout(() => process.exit(1), STOP_GRACE_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  await poller.run();
  await beforeExit();
  if (last && process.send && process.connected) process.send(last(), () => process.exit(0));
  else process.exit(0);
  return new Promise<never>(() => {});
}
