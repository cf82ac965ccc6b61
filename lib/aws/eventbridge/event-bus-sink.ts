/**
 * Puts lifecycle events users alarm and route on (committed, failed, dead,
 * fenced_out, missed, skipped, stale, set_aside) on the EventBridge bus. `claimed` and `started`
 * stay in-process (logs, CLI): at a million executions they would be two
 * million paid events that nobody routes.
 *
 * emit() buffers; flush() sends in PutEvents batches of 10. A Lambda handler
 * flushes before it returns. Publishing is best effort: a lost event never
 * changes an execution's outcome.
 */
import { PutEventsCommand, type EventBridgeClient, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { EventSink, LifecycleEvent, LifecycleEventType } from '../../core/events.ts';
import { EVENT_SOURCE } from '../schema.ts';

const BUS_TYPES: readonly LifecycleEventType[] = ['committed', 'failed', 'dead', 'fenced_out', 'missed', 'skipped', 'stale', 'set_aside'];
const PUT_EVENTS_BATCH = 10;

export class EventBusSink implements EventSink {
  private buffer: PutEventsRequestEntry[] = [];
  private readonly types: ReadonlySet<LifecycleEventType>;

  constructor(
    private readonly events: EventBridgeClient,
    private readonly busName: string,
    options: { publishSucceeded: boolean },
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.types = new Set(BUS_TYPES.filter((type) => options.publishSucceeded || type !== 'committed'));
  }

  emit(event: LifecycleEvent): void {
    if (!this.types.has(event.type)) return;
    this.buffer.push({ EventBusName: this.busName, Source: EVENT_SOURCE, DetailType: event.type, Detail: JSON.stringify(event) });
  }

  async flush(): Promise<void> {
    const entries = this.buffer;
    this.buffer = [];
    for (let i = 0; i < entries.length; i += PUT_EVENTS_BATCH) {
      try {
        await this.events.send(new PutEventsCommand({ Entries: entries.slice(i, i + PUT_EVENTS_BATCH) }));
      } catch (error) {
        this.onError(error);
      }
    }
  }
}
