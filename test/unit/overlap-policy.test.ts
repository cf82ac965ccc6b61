/**
 * The overlap policy: the pure decision, then the real Worker over the
 * in-memory stores on a ManualClock, with a handler held open by a gate so
 * that the next occurrence is claimed while the first still runs.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/core/clock.ts';
import { DEFAULT_POLICIES, type OverlapPolicy } from '../../lib/core/job-spec.ts';
import { decideOverlap, LINE_WAIT_MS } from '../../lib/core/overlap-policy.ts';
import { LEASE_EXPIRY_MARGIN_MS, type Slice } from '../../lib/core/slice.ts';
import { createMemoryEngine, gate, type MemoryEngine } from '../support/memory-engine.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
/** The occurrence claimed while the first still runs (enqueued by hand: the overlap, not the schedule, is under test). */
const NEXT = T0 + 2000;
const LATER = T0 + 10_000;

function slice(at: number, status: Slice['status'], extra: Partial<Slice> = {}): Slice {
  return {
    jobId: 'j',
    scheduledAt: at,
    status,
    fence: 1,
    attempts: 1,
    handler: 'h',
    policies: DEFAULT_POLICIES,
    shard: 0,
    generation: 1,
    createdAt: T0,
    ...extra,
  };
}

const running = (at: number, startedAt: number, leaseExpiresAt = startedAt + 4000): Slice =>
  slice(at, 'RUNNING', { startedAt, leaseExpiresAt });

describe('decideOverlap (pure)', () => {
  const laneRun = running(T0, T0 + 100, T0 + 12_000);
  const waiting = slice(T0 + 5000, 'ENQUEUED', { bufferedAt: T0 + 5000 });

  it("allow, the lane already this occurrence's, or no live run and none in line: run", () => {
    expect(decideOverlap('allow', { holdsLane: false, laneRun }, LATER).kind).toBe('run');
    expect(decideOverlap('skip', { holdsLane: true, laneRun }, LATER).kind).toBe('run');
    expect(decideOverlap('skip', { holdsLane: false, laneRun: slice(T0, 'SUCCEEDED') }, LATER).kind).toBe('run');
    expect(decideOverlap('bufferAll', { holdsLane: false }, LATER).kind).toBe('run');
  });

  it('a lane run whose lease lapsed beyond the skew margin is not running', () => {
    expect(decideOverlap('skip', { holdsLane: false, laneRun: running(T0, T0, T0 + 4000) }, LATER).kind).toBe('run');
    expect(decideOverlap('skip', { holdsLane: false, laneRun: running(T0, T0, LATER - LEASE_EXPIRY_MARGIN_MS + 1) }, LATER).kind).toBe(
      'skip',
    );
  });

  it('skip, replace and the buffers against a live lane run', () => {
    expect(decideOverlap('skip', { holdsLane: false, laneRun }, LATER)).toMatchObject({ kind: 'skip', reason: 'overlap', ahead: laneRun });
    expect(decideOverlap('replace', { holdsLane: false, laneRun }, LATER)).toMatchObject({ kind: 'replace', victim: laneRun });
    // A quarter of what the run ahead may still take (60 s timeout from 12:00:00.1): 12.5 s.
    expect(decideOverlap('bufferAll', { holdsLane: false, laneRun }, LATER)).toMatchObject({ kind: 'wait', untilMs: LATER + 12_525 });
    expect(decideOverlap('bufferOne', { holdsLane: false, laneRun }, LATER)).toMatchObject({ kind: 'wait', untilMs: LATER + 12_525 });
  });

  it('the line: bufferOne drops an occurrence when another waits ahead of it; bufferAll waits behind it, run or no run', () => {
    expect(decideOverlap('bufferOne', { holdsLane: false, laneRun, aheadInLine: waiting }, LATER)).toMatchObject({
      kind: 'skip',
      reason: 'overlap',
      ahead: waiting,
    });
    expect(decideOverlap('bufferOne', { holdsLane: false, aheadInLine: waiting }, LATER)).toMatchObject({ kind: 'skip', ahead: waiting });
    expect(decideOverlap('bufferAll', { holdsLane: false, laneRun, aheadInLine: waiting }, LATER)).toMatchObject({
      kind: 'wait',
      ahead: laneRun,
    });
    expect(decideOverlap('bufferAll', { holdsLane: false, aheadInLine: waiting }, LATER)).toMatchObject({
      kind: 'wait',
      untilMs: LATER + LINE_WAIT_MS,
      ahead: waiting,
    });
    // skip and replace judge the lane's run only.
    expect(decideOverlap('skip', { holdsLane: false, aheadInLine: waiting }, LATER).kind).toBe('run');
  });
});

interface Scenario {
  readonly engine: MemoryEngine;
  readonly clock: ManualClock;
  readonly release: () => void;
  readonly first: Promise<unknown>;
  readonly runs: number[];
}

/** Job `id` with `policy`: its T0 occurrence is claimed and held running by worker-1. */
async function firstHeldRunning(id: string, policy: OverlapPolicy): Promise<Scenario> {
  const clock = new ManualClock(T0);
  const engine = createMemoryEngine(clock);
  const held = gate();
  const runs: number[] = [];
  const job = await engine.register({ id, schedule: 'rate(10 seconds)', policies: { overlap: policy, timeoutMs: 60_000 } }, async (ctx) => {
    runs.push(ctx.scheduledAt.getTime());
    if (ctx.scheduledAt.getTime() === T0)
      await Promise.race([held.opened, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
  });
  await engine.enqueue(job, T0);
  const [message] = engine.workQueue.receive();
  const first = engine.deliver(engine.worker('worker-1'), message!);
  await engine.nextEvent((event) => event.type === 'started' && event.worker === 'worker-1');
  // Inside the first one's lease (claimed at T0 for 4 s), so it is live whatever its real-time renewals did.
  clock.set(T0 + 2500);
  await engine.enqueue(job, NEXT);
  return { engine, clock, release: held.open, first, runs };
}

/** Delivers the visible message of the occurrence at `at` (the first one's own message may have surfaced too: left alone). */
async function deliverNext(scenario: Scenario, worker: string, at = NEXT): Promise<string> {
  const message = scenario.engine.workQueue
    .receive()
    .find((received) => (JSON.parse(received.body) as { scheduledAt: number }).scheduledAt === at);
  expect(message).toBeDefined();
  return scenario.engine.deliver(scenario.engine.worker(worker), message!);
}

const statusAt = async (scenario: Scenario, id: string, at: number): Promise<Slice | undefined> =>
  (await scenario.engine.jobs().slicesOf(id, 0)).find((slice) => slice.scheduledAt === at);

describe('overlap policy over the real Worker (in-memory stores, manual clock)', () => {
  it('skip: the next occurrence, due while the first runs, is SKIPPED "overlap" with an event; the first commits', async () => {
    const scenario = await firstHeldRunning('ov-skip', 'skip');
    expect(await deliverNext(scenario, 'worker-2')).toBe('delete');
    expect(await statusAt(scenario, 'ov-skip', NEXT)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap' });
    expect(scenario.engine.events.ofType('skipped').map((event) => [event.scheduledAt, event.reason])).toEqual([
      ['2026-06-01T12:00:02Z', 'overlap'],
    ]);
    scenario.release();
    await scenario.first;
    expect((await statusAt(scenario, 'ov-skip', T0))?.status).toBe('SUCCEEDED');
    expect(scenario.runs).toEqual([T0]);
  });

  it('bufferAll: the next waits (ENQUEUED, the claim undone) and runs once the first is done', async () => {
    const scenario = await firstHeldRunning('ov-buffer', 'bufferAll');
    expect(await deliverNext(scenario, 'worker-2')).toBe('keep');
    expect(await statusAt(scenario, 'ov-buffer', NEXT)).toMatchObject({ status: 'ENQUEUED', attempts: 0, bufferedAt: T0 + 2500 });
    expect(scenario.engine.events.ofType('buffered').map((event) => [event.scheduledAt, event.worker, event.retryAt])).toEqual([
      ['2026-06-01T12:00:02Z', 'worker-2', '2026-06-01T12:00:16.875Z'],
    ]);
    scenario.release();
    await scenario.first;
    // Its message was hidden for a quarter of what the first could still take (60 s timeout): 15 s.
    scenario.clock.set(T0 + 20_000);
    expect(await deliverNext(scenario, 'worker-2')).toBe('delete');
    expect(await statusAt(scenario, 'ov-buffer', NEXT)).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });
    expect(scenario.runs).toEqual([T0, NEXT]);
  });

  it('bufferOne: one waits; a third due meanwhile is SKIPPED "overlap"', async () => {
    const scenario = await firstHeldRunning('ov-one', 'bufferOne');
    expect(await deliverNext(scenario, 'worker-2')).toBe('keep');
    scenario.clock.set(T0 + 3500);
    await scenario.engine.enqueue((await scenario.engine.jobs().get('ov-one'))!, T0 + 3000);
    expect(await deliverNext(scenario, 'worker-3', T0 + 3000)).toBe('delete');
    expect(await statusAt(scenario, 'ov-one', T0 + 3000)).toMatchObject({ status: 'SKIPPED', skipReason: 'overlap' });
    scenario.release();
    await scenario.first;
  });

  it('replace: the running one is fenced out (SKIPPED "replaced", fence + 1, its signal fires, no commit); the next runs', async () => {
    const scenario = await firstHeldRunning('ov-replace', 'replace');
    expect(await deliverNext(scenario, 'worker-2')).toBe('delete');
    expect(await statusAt(scenario, 'ov-replace', T0)).toMatchObject({ status: 'SKIPPED', skipReason: 'replaced', fence: 2 });
    // The replaced worker learns it at its next renewal (real time: a heartbeat), is aborted and commits nothing.
    expect(await scenario.first).toBe('keep');
    expect(scenario.engine.events.ofType('fenced_out').map((event) => event.worker)).toEqual(['worker-1']);
    expect(await scenario.engine.slices.getLedger({ jobId: 'ov-replace', scheduledAt: T0 })).toBeUndefined();
    expect((await statusAt(scenario, 'ov-replace', NEXT))?.status).toBe('SUCCEEDED');
    expect(scenario.engine.events.ofType('skipped').map((event) => [event.scheduledAt, event.reason])).toEqual([
      ['2026-06-01T12:00:00Z', 'replaced'],
    ]);
  });
});
