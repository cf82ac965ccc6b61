/**
 * Operator slots with a failure between their writes, against the emulator:
 * the slot's transaction lands and the send to the work queue that follows
 * is refused (a WorkQueue port wrapper), then the operator sends the same
 * request again. The slot is run once: the retry re-sends a slot still
 * waiting; without the retry, the sweep would (it is in the sweep index).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperatorActions } from '../../lib/aws/operator-actions.ts';
import { ManualClock } from '../../lib/core/clock.ts';
import type { WorkMessage, WorkQueue } from '../../lib/core/ports.ts';
import { occurrencesBetween } from '../../lib/core/schedule.ts';
import { SliceStatus } from '../../lib/core/slice.ts';
import { createTestInstallation, type TestInstallation } from '../support/harness.ts';

const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const clock = new ManualClock(T0);
let installation: TestInstallation;

beforeAll(async () => {
  installation = await createTestInstallation({ clock });
});
afterAll(() => installation?.destroy());

/** Keeps what is sent (sends nothing on); the first send is refused. */
class RefusingFirstSend implements WorkQueue {
  readonly sent: WorkMessage[] = [];
  private refused = false;

  async send(messages: readonly WorkMessage[]): Promise<void> {
    if (!this.refused) {
      this.refused = true;
      throw new Error('SendMessageBatch refused (test)');
    }
    this.sent.push(...messages);
  }

  async hide(): Promise<void> {}

  async hideBatched(): Promise<void> {}
}

function operatorOver(queue: WorkQueue): OperatorActions {
  const { runtime } = installation;
  return new OperatorActions(runtime.clients.dynamo, runtime.config, clock, runtime.jobs(), runtime.slices, queue, runtime.random);
}

describe('an operator slot whose send fails after its transaction', () => {
  it('trigger: the same request again re-sends the slot it made, and makes no second one', async () => {
    clock.set(T0);
    await installation.runtime.jobs().put({ id: 'triggered', schedule: '0 0 0 1 1 *', handler: 'h' });
    const queue = new RefusingFirstSend();
    const operator = operatorOver(queue);
    const request = { requestId: 'month-end-1', actor: 'ops', reason: 'month end' };
    await expect(operator.trigger('triggered', request)).rejects.toThrow(/refused \(test\)/);
    clock.advance(1000);
    const again = await operator.trigger('triggered', request);
    expect(again).toMatchObject({ created: false, status: SliceStatus.Enqueued });
    expect(queue.sent.map((message) => [message.jobId, message.scheduledAt])).toEqual([[again.key.jobId, again.key.scheduledAt]]);
    const slices = await installation.runtime.jobs().slicesOf('triggered', 0);
    expect(slices.map((slice) => slice.scheduledAt)).toEqual([again.key.scheduledAt]);
  });

  it('backfill: the same backfill again re-sends every slot still waiting, and creates none twice', async () => {
    clock.set(T0 + 120_000);
    await installation.runtime.jobs().put({ id: 'backfilled', schedule: '*/20 * * * * *', handler: 'h', enabled: false });
    const queue = new RefusingFirstSend();
    const operator = operatorOver(queue);
    const request = { from: T0, to: T0 + 60_000, actor: 'ops', reason: 'outage' };
    await expect(operator.backfill('backfilled', request)).rejects.toThrow(/refused \(test\)/);
    const again = await operator.backfill('backfilled', request);
    const expected = occurrencesBetween({ cron: '*/20 * * * * *', timeZone: 'UTC' }, T0, T0 + 60_000, 10);
    expect(again).toMatchObject({ total: 3, created: 0, existing: 3, alreadyLive: 3 });
    expect(queue.sent.map((message) => message.scheduledAt)).toEqual(expected);
    const slices = await installation.runtime.jobs().slicesOf('backfilled', 0);
    expect(slices.map((slice) => [slice.scheduledAt, slice.status])).toEqual(expected.map((at) => [at, SliceStatus.Enqueued]));
  });
});
