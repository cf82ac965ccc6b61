/**
 * The process shell every forked replica shares (lib/local/replica.ts, the
 * bench's replica): its role and id from argv, messages to the parent over
 * IPC, and a poller run until a signal or the parent's disappearance stops it.
 */
import type { SqsPoller } from './sqs-poller.ts';

export type ReplicaRole = 'scanner' | 'worker';

/** After a stop, in-flight work gets this long; a handler stuck on a dead emulator must not keep the process alive. */
const STOP_GRACE_MS = 15_000;

/** `<entry> worker|scanner <id> [--jobs <module>]`; exits 2 with the usage line otherwise. */
export function replicaArgs(entry: string): { role: ReplicaRole; id: string; jobsModule?: string } {
  const [role, id, flag, jobsModule, ...rest] = process.argv.slice(2);
  const jobsOk = flag === undefined || (flag === '--jobs' && jobsModule !== undefined && rest.length === 0);
  if ((role !== 'worker' && role !== 'scanner') || !id || !jobsOk) {
    process.stderr.write(`usage: ${entry} worker|scanner <id> [--jobs <module>]\n`);
    process.exit(2);
  }
  return { role, id, ...(jobsModule !== undefined && { jobsModule }) };
}

export function toParent(message: object): void {
  if (process.send && process.connected) process.send(message);
}

/**
 * Polls until SIGTERM, SIGINT or the parent's disconnect (a drill, `cronfence
 * dev` or the bench gone: nobody would collect this replica's reports or stop
 * it), lets `beforeExit` run, then sends `last()` to the parent, if there is
 * one, and exits once it is out.
 */
export async function runUntilStopped(poller: SqsPoller, beforeExit: () => Promise<void>, last: () => object): Promise<never> {
  const stop = (): void => {
    poller.stop();
    setTimeout(() => process.exit(1), STOP_GRACE_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  await poller.run();
  await beforeExit();
  if (process.send && process.connected) process.send(last(), () => process.exit(0));
  else process.exit(0);
  return new Promise<never>(() => {});
}
