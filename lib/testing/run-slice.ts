/**
 * One slice of a job run by real Workers over the real adapters, as the test
 * helper's `runSlice` and `runSliceWithTakeover` do it:
 *
 *   put the job ─▶ create its slice ENQUEUED (SliceStore.enqueue, as the reconciler does)
 *     ─▶ send and receive its work message ─▶ Worker.process: claim, lease,
 *        handler, commit on the fence
 *
 * Each worker's clock is set to the slice's second, so a monthly job's next
 * occurrence runs now, with `ctx.scheduledAt` as it will be in production.
 * The takeover: a second worker whose clock is past the first one's lease
 * (lease + the 4 s skew margin) claims the slice, as a standby does once a
 * holder stops renewing (a paused process), while the first still runs.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { OffsetClock } from '../core/clock.ts';
import { RecordingEventSink, type EventSink, type LifecycleEvent } from '../core/events.ts';
import { InvalidJobSpecError } from '../core/errors.ts';
import { executionKey } from '../core/execution-key.ts';
import type { JobPolicies, JobSpecInput } from '../core/job-spec.ts';
import type { BusinessWrite } from '../core/ports.ts';
import { definitionOf } from '../core/job-record.ts';
import type { LedgerRecord } from '../core/ledger.ts';
import { LEASE_EXPIRY_MARGIN_MS, type Slice, type SliceKey } from '../core/slice.ts';
import type { JobsModule } from '../lambda/jobs-module.ts';
import { createRuntime, type Runtime } from '../lambda/wiring.ts';
import { RunObserver, type HandlerEnd } from './observe.ts';
import { deleteMessage, sendAndReceive } from './work-messages.ts';

export interface RunSliceOptions {
  /** The occurrence to run (whole seconds). @default the job's next occurrence from now */
  readonly scheduledAt?: Date | string | number;
  /** Replaces the job's payload. */
  readonly payload?: Record<string, unknown>;
  /** Merged over the job's policies. */
  readonly policies?: Partial<JobPolicies>;
}

export interface TakeoverOptions extends RunSliceOptions {
  /**
   * When the second worker takes over: `'commit'`, as the first one's handler
   * calls `ctx.commit` (its commit is held until the takeover is done, then
   * refused); or a number of ms after the first handler started (it learns of
   * the loss at its next heartbeat: `ctx.signal` fires). @default 'commit'
   */
  readonly at?: 'commit' | number;
}

/** One worker's part in a run. */
export interface AttemptReport {
  readonly worker: string;
  readonly fence: number | undefined;
  /** The worker's last outcome event: committed, failed, dead, fenced_out; `none` when it stood down. */
  readonly outcome: 'committed' | 'failed' | 'dead' | 'fenced_out' | 'none';
  /** How the handler call itself ended: returned, threw (what), or still running 5 s after its worker was done. */
  readonly handler: HandlerEnd | undefined;
}

export interface SliceRun extends AttemptReport {
  readonly executionKey: string;
  readonly scheduledAt: Date;
  /** Every lifecycle event of this slice, in order. */
  readonly events: LifecycleEvent[];
  /** The business writes of the commit that landed (empty when none did, or it had none). */
  readonly writes: readonly BusinessWrite[];
  /** Every commit sent, landed or refused, with its worker and fence. */
  readonly commits: RunObserver['commits'];
  readonly slice: Slice | undefined;
  readonly ledger: LedgerRecord | undefined;
}

export interface TakeoverRun extends Omit<SliceRun, keyof AttemptReport> {
  /** The first worker, fenced out (unless it committed before the takeover could happen). */
  readonly zombie: AttemptReport;
  /** The second worker; undefined when the first one finished before the takeover. */
  readonly takeover: AttemptReport | undefined;
}

export interface RunContext {
  readonly jobs: JobsModule;
  readonly runtime: Runtime;
  readonly env: Record<string, string | undefined>;
}

const WORKER = 'test-worker';
const STANDBY = 'test-standby';
/** How long a handler call may keep running after its worker is done before it is reported as running. */
const HANDLER_SETTLE_MS = 5000;

export async function runSlice(context: RunContext, job: string | JobSpecInput, options: RunSliceOptions): Promise<SliceRun> {
  const { key } = await createSlice(context, job, options);
  const observer = new RunObserver();
  const events = new RecordingEventSink();
  const worker = workerFor(context, observer, [events], WORKER, key.scheduledAt - Date.now());
  await processAndSettle(context.runtime, worker, await sendAndReceive(context.runtime, key));
  return { ...(await report(observer, events, WORKER, key)), ...(await outcomeOf(context.runtime, observer, events, key)) };
}

export async function runSliceWithTakeover(
  context: RunContext,
  job: string | JobSpecInput,
  options: TakeoverOptions,
): Promise<TakeoverRun> {
  const { key, policies } = await createSlice(context, job, options);
  const at = options.at ?? 'commit';
  const observer = new RunObserver();
  const events = new RecordingEventSink();
  const offset = key.scheduledAt - Date.now();
  const standby = workerFor(context, observer, [events], STANDBY, offset + policies.leaseMs + LEASE_EXPIRY_MARGIN_MS + 1000);
  let takeover: Promise<void> | undefined;
  const takeOver = (): Promise<void> =>
    (takeover ??= sendAndReceive(context.runtime, key).then((message) => processAndSettle(context.runtime, standby, message)));
  let timer: NodeJS.Timeout | undefined;
  // A number: the takeover starts that long after the first handler started.
  const trigger: EventSink = {
    emit: (event) => {
      if (typeof at === 'number' && event.type === 'started' && event.worker === WORKER)
        timer = setTimeout(() => void takeOver().catch(() => {}), at);
    },
  };
  // 'commit': the first worker's commit waits at this gate until the standby has run the slice.
  const zombie = workerFor(context, observer, [events, trigger], WORKER, offset, at === 'commit' ? takeOver : undefined);
  await processAndSettle(context.runtime, zombie, await sendAndReceive(context.runtime, key));
  clearTimeout(timer); // the first worker is done: a takeover not started by now would find nothing to take over
  if (takeover) await takeover;
  const tookOver = events.events.some((event) => event.type === 'claimed' && event.worker === STANDBY);
  return {
    zombie: await report(observer, events, WORKER, key),
    takeover: tookOver ? await report(observer, events, STANDBY, key) : undefined,
    ...(await outcomeOf(context.runtime, observer, events, key)),
  };
}

async function createSlice(
  context: RunContext,
  job: string | JobSpecInput,
  options: RunSliceOptions,
): Promise<{ key: SliceKey; policies: JobPolicies }> {
  const spec = { ...jobSpec(context.jobs, job), ...(options.payload && { payload: options.payload }) };
  const merged = options.policies ? { ...spec, policies: { ...spec.policies, ...options.policies } } : spec;
  const { job: stored } = await context.runtime.jobs(context.jobs.registry.names()).put(merged);
  const scheduledAt = options.scheduledAt === undefined ? stored.nextFireAt : wholeSecond(options.scheduledAt);
  const key = { jobId: stored.id, scheduledAt };
  const created = await context.runtime.slices.enqueue(definitionOf(stored), [{ ...key, sweepAt: scheduledAt + 30_000 }], Date.now());
  if (created.length !== 1) {
    throw new InvalidJobSpecError(
      'scheduledAt',
      new Date(scheduledAt).toISOString(),
      `a slice of ${stored.id} at this instant exists already in this test installation`,
    );
  }
  return { key, policies: stored.policies };
}

function jobSpec(jobs: JobsModule, job: string | JobSpecInput): JobSpecInput {
  if (typeof job !== 'string') return job;
  const declared = jobs.schedules.find((candidate) => candidate.id === job);
  if (declared) return declared;
  if (jobs.registry.get(job)) return { id: job, schedule: '* * * * *', handler: job };
  const known = [...jobs.schedules.map((candidate) => candidate.id), ...jobs.registry.names()];
  throw new InvalidJobSpecError(
    'job',
    job,
    `is neither a job in the module's schedules nor a handler it exports (known: ${[...new Set(known)].join(', ')})`,
  );
}

function wholeSecond(value: Date | string | number): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : value;
  if (!Number.isFinite(ms)) throw new InvalidJobSpecError('scheduledAt', value, 'is not a date');
  return Math.floor(ms / 1000) * 1000;
}

function workerFor(
  context: RunContext,
  observer: RunObserver,
  sinks: EventSink[],
  id: string,
  offsetMs: number,
  gate?: () => Promise<void>,
) {
  const runtime = createRuntime({
    env: context.env,
    clients: context.runtime.clients,
    clock: new OffsetClock(offsetMs),
    sinks,
    decoratePorts: (ports) => ({ ...ports, slices: observer.wrapStore(ports.slices, id, gate) }),
  });
  return { runtime, worker: runtime.worker(id, observer.wrapRegistry(context.jobs.registry)) };
}

async function processAndSettle(runtime: Runtime, { runtime: own, worker }: ReturnType<typeof workerFor>, message: Message): Promise<void> {
  const disposition = await worker.process({
    body: message.Body ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    messageId: message.MessageId,
  });
  if (disposition === 'delete') await deleteMessage(runtime, message);
  await own.bus.flush();
}

async function report(observer: RunObserver, events: RecordingEventSink, worker: string, key: SliceKey): Promise<AttemptReport> {
  const mine = events.events.filter((event) => event.worker === worker);
  const outcomes = mine.filter((event) => ['committed', 'failed', 'dead', 'fenced_out'].includes(event.type));
  const last = outcomes.at(-1);
  return {
    worker,
    fence: mine.find((event) => event.type === 'claimed')?.fence,
    outcome: (last?.type as AttemptReport['outcome'] | undefined) ?? 'none',
    handler: await observer.handlerEnd(worker, executionKey(key.jobId, key.scheduledAt), HANDLER_SETTLE_MS),
  };
}

async function outcomeOf(runtime: Runtime, observer: RunObserver, events: RecordingEventSink, key: SliceKey) {
  const landed = observer.commits.find((commit) => commit.result === 'landed');
  return {
    executionKey: executionKey(key.jobId, key.scheduledAt),
    scheduledAt: new Date(key.scheduledAt),
    events: events.events.filter((event) => event.jobId === key.jobId && Date.parse(event.scheduledAt) === key.scheduledAt),
    writes: landed?.writes ?? [],
    commits: observer.commits,
    slice: await runtime.slices.get(key),
    ledger: await runtime.slices.getLedger(key),
  };
}
