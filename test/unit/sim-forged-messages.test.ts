/**
 * The simulation's forged messages (tools/sim/forged-messages.ts): the seeded
 * plan, what each kind puts on the queue, and the check that fails a forged
 * message that ran or was never rejected.
 */
import { describe, expect, it } from 'vitest';
import { decodeWorkMessage } from '../../lib/core/messages.ts';
import { InMemoryWorkQueue } from '../../lib/memory/index.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import { storedJobRecord } from '../support/job-records.ts';
import { cronParserOccurrences } from '../../tools/chaos/expected.ts';
import { JobHistoryBook } from '../../tools/chaos/job-history.ts';
import {
  checkForgeries,
  forgeryViolations,
  ForgeryInjector,
  FORGED_KINDS,
  planForgeries,
  type Forgery,
} from '../../tools/sim/forged-messages.ts';

const T0 = Date.parse('2026-12-07T05:00:00Z');

function injector(): { forger: ForgeryInjector; queue: InMemoryWorkQueue; clock: ManualClock } {
  const clock = new ManualClock(T0);
  const queue = new InMemoryWorkQueue(clock);
  const book = new JobHistoryBook();
  book.record('create', storedJobRecord('every-5s', '*/5 * * * * *', 3, T0 - 600_000));
  const forger = new ForgeryInjector(
    { sendBody: (body) => queue.sendBody(body), book, jobIds: ['every-5s'], enumerate: cronParserOccurrences, now: () => clock.now() },
    7,
  );
  return { forger, queue, clock };
}

describe('forged messages', () => {
  it('are planned from the seed alone, about four a minute, inside the window', () => {
    const plan = planForgeries({ seed: 5, durationMs: 600_000 });
    expect(planForgeries({ seed: 5, durationMs: 600_000 })).toEqual(plan);
    expect(planForgeries({ seed: 6, durationMs: 600_000 })).not.toEqual(plan);
    expect(plan.length).toBeGreaterThanOrEqual(30);
    expect(plan.length).toBeLessThanOrEqual(60);
    expect(plan.every((p) => p.atMs > 0 && p.atMs < 600_000)).toBe(true);
    expect(new Set(plan.map((p) => p.kind))).toEqual(new Set(FORGED_KINDS));
  });

  it('name, for each kind, nothing a worker may run: no slot of the job, no job, or no work message at all', async () => {
    const { forger, queue } = injector();
    for (const kind of FORGED_KINDS) {
      for (let i = 0; i < 5; i++) {
        const forgery = (await forger.forge(kind)) as Forgery;
        expect(queue.bodies()).toContain(forgery.body);
        if (kind === 'garbled') {
          expect(() => decodeWorkMessage(forgery.body), forgery.body).toThrow();
          continue;
        }
        const order = decodeWorkMessage(forgery.body);
        if (kind === 'unknownJob') expect(order.jobId).toMatch(/^forged-/);
        else expect(order.jobId).toBe('every-5s');
        if (kind === 'offSchedule' || kind === 'legacyRun') expect(order.generation).toBe(3);
        if (kind === 'noSlice' || kind === 'farAhead') expect(order.generation).toBeUndefined();
        if (kind === 'farAhead') expect(order.scheduledAt).toBeGreaterThan(T0 + 3_600_000);
        else if (kind !== 'unknownJob') expect(order.scheduledAt % 5000, `${kind} ${forgery.body}`).not.toBe(0);
        if (kind === 'legacyRun') expect(JSON.parse(forgery.body).run.handler).toBe('forged-drain');
      }
    }
  });

  describe('the check', () => {
    const sent = (kind: Forgery['kind'], body: string, extra: Partial<Forgery> = {}): Forgery => ({ kind, body, at: T0, ...extra });
    const offSchedule = sent('offSchedule', '{"v":1,"jobId":"j","scheduledAt":1,"generation":2}', {
      executionKey: 'j:1',
      jobId: 'j',
      generation: 2,
    });
    const garbled = sent('garbled', 'not json at all');
    const base = {
      rejected: [],
      stillQueued: [],
      lastStartedAt: new Map<string, number>(),
      onRecord: new Set<string>(),
      expected: new Set<string>(),
      changedAfter: () => false,
    };

    it('passes forged messages each rejected with a reason, none of them run', () => {
      const verdict = checkForgeries({
        ...base,
        forgeries: [offSchedule, garbled],
        rejected: [
          { body: offSchedule.body, reason: 'not an occurrence', kind: 'unrunnable-message' },
          { body: garbled.body, reason: 'not JSON', kind: 'malformed-message' },
        ],
      });
      expect(verdict).toEqual({ forged: 2, ran: [], unsettled: [] });
      expect(forgeryViolations(verdict)).toEqual([]);
    });

    it('fails a forged slot that was started or committed after it was sent, unless a later change made it a real occurrence', () => {
      const rejected = [{ body: offSchedule.body, reason: 'r', kind: 'unrunnable-message' as const }];
      const ran = checkForgeries({ ...base, forgeries: [offSchedule], rejected, lastStartedAt: new Map([['j:1', T0 + 500]]) });
      expect(forgeryViolations(ran)).toEqual(['forged messages that ran: offSchedule j:1']);
      // A committed effect whose start was not seen counts as run after it.
      expect(checkForgeries({ ...base, forgeries: [offSchedule], rejected, lastStartedAt: new Map([['j:1', Infinity]]) }).ran).toHaveLength(
        1,
      );
      expect(
        checkForgeries({ ...base, forgeries: [offSchedule], rejected, lastStartedAt: new Map([['j:1', T0]]), expected: new Set(['j:1']) })
          .ran,
      ).toEqual([]);
      // Run before the forgery was sent (a scanner's message of a generation a change then ended): not its doing.
      expect(checkForgeries({ ...base, forgeries: [offSchedule], rejected, lastStartedAt: new Map([['j:1', T0 - 55_000]]) }).ran).toEqual(
        [],
      );
    });

    it('fails a forged message never rejected, or still on the queue, unless its job has since left its generation or its slot is real or on record', () => {
      const neverRejected = checkForgeries({ ...base, forgeries: [offSchedule, garbled] });
      expect(neverRejected.unsettled).toHaveLength(2);
      const stale = checkForgeries({ ...base, forgeries: [offSchedule, garbled], changedAfter: () => true });
      expect(stale.unsettled).toEqual([`garbled ${JSON.stringify(garbled.body)}`]);
      const real = checkForgeries({ ...base, forgeries: [offSchedule, garbled], expected: new Set(['j:1']) });
      expect(real.unsettled).toEqual([`garbled ${JSON.stringify(garbled.body)}`]);
      const onRecord = checkForgeries({ ...base, forgeries: [offSchedule, garbled], onRecord: new Set(['j:1']) });
      expect(onRecord.unsettled).toEqual([`garbled ${JSON.stringify(garbled.body)}`]);
      const queued = checkForgeries({
        ...base,
        forgeries: [garbled],
        rejected: [{ body: garbled.body, reason: 'not JSON', kind: 'malformed-message' }],
        stillQueued: [garbled.body],
      });
      expect(forgeryViolations(queued)).toEqual([`forged messages not rejected: garbled ${JSON.stringify(garbled.body)}`]);
    });
  });
});

describe('the in-memory work queue, sent a body of the caller`s', () => {
  it('queues whatever SQS takes, readable or not, and refuses what SQS refuses', async () => {
    const clock = new ManualClock(T0);
    const queue = new InMemoryWorkQueue(clock);
    await queue.sendBody('not json at all', 2);
    expect(queue.receive(clock.now())).toEqual([]);
    clock.advance(2000);
    const [message] = queue.receive(clock.now());
    expect(message?.body).toBe('not json at all');
    expect(queue.bodyOf(message!.receiptHandle)).toBe('not json at all');
    expect(queue.bodies()).toEqual(['not json at all']);
    await expect(queue.sendBody('bad \uffff')).rejects.toThrow(/InvalidMessageContents/);
    expect(queue.bodies()).toHaveLength(1);
    queue.delete(message!.receiptHandle);
    expect(queue.bodyOf(message!.receiptHandle)).toBeUndefined();
  });
});
