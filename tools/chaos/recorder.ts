/**
 * What the drill saw while it ran: events and renewals from the replicas,
 * the faults they and the drill injected, and each replica's clock offset
 * (its skew from the drill's clock), so the checker can put every timestamp
 * on one clock.
 */
import type { Replica, ReplicaReport, ReplicaRole } from '../../lib/local/fleet.ts';
import { FAULT_KINDS, type FaultKind } from './config.ts';
import type {
  InjectedClientFault,
  InjectedProcessFault,
  ObservedChunk,
  ObservedEvent,
  ObservedReceive,
  ObservedRenewal,
  ObservedSend,
} from './observed.ts';

export class HistoryRecorder {
  readonly events: ObservedEvent[] = [];
  readonly renewals: ObservedRenewal[] = [];
  readonly processFaults: InjectedProcessFault[] = [];
  readonly clientFaults: InjectedClientFault[] = [];
  /** The workers' receives of work messages (a slow takeover: was the message late, or the claim?). */
  readonly receives: ObservedReceive[] = [];
  /** Every work message sent or dropped (an occurrence never received: was it sent, and by whom?). */
  readonly sends: ObservedSend[] = [];
  /** Chunked commits the workers reported (the settlement drill's). */
  readonly chunks: ObservedChunk[] = [];
  /** Told of each chunk report as it comes (the settlement drill's mid-batch faults). */
  onChunk?: (chunk: ObservedChunk, replica: Replica) => void;
  /** Each replica's clock minus the drill's, ms. */
  readonly offsets = new Map<string, number>();
  readonly paused = new Set<string>();
  readonly faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  committed = 0;
  private readonly inFlight = new Map<string, Set<string>>();
  private readonly generations = new Map<string, number>();

  nextGeneration(role: ReplicaRole, slot: number): number {
    const key = `${role}-${slot}`;
    const next = (this.generations.get(key) ?? 0) + 1;
    this.generations.set(key, next);
    return next;
  }

  event(event: ObservedEvent['event'], replica: Replica): void {
    this.events.push({ replica: replica.id, offsetMs: this.offsets.get(replica.id) ?? 0, event });
    const attempt = `${event.executionKey}#${event.fence}`;
    const busy = this.inFlight.get(replica.id) ?? new Set<string>();
    this.inFlight.set(replica.id, busy);
    if (event.type === 'claimed') busy.add(attempt);
    else if (event.type !== 'started') busy.delete(attempt);
    if (event.type === 'committed') this.committed++;
  }

  report(report: ReplicaReport, replica: Replica, now: number): void {
    if (report.kind === 'fault') {
      if (report.fault in this.faults) this.faults[report.fault as FaultKind]++;
      if (report.fault === 'throttle' || report.fault === 'hang') {
        this.clientFaults.push({
          kind: report.fault,
          replica: replica.id,
          at: now,
          request: report.request ?? '',
          ...(report.executionKey ? { executionKey: report.executionKey } : {}),
          ...(report.jobIds ? { jobIds: report.jobIds } : {}),
        });
      }
      return;
    }
    if (report.kind === 'received') {
      this.receives.push({
        replica: replica.id,
        executionKey: report.executionKey,
        at: now,
        messageId: report.messageId,
        receiveCount: report.receiveCount,
      });
      return;
    }
    if (report.kind === 'sent') {
      this.sends.push({
        replica: replica.id,
        executionKey: report.executionKey,
        at: now,
        delaySeconds: report.delaySeconds,
        dropped: report.dropped,
      });
      return;
    }
    if (report.kind === 'chunk') {
      const { executionKey, fence, chunk, outcome } = report;
      const observed: ObservedChunk = { replica: replica.id, executionKey, fence, chunk, outcome, at: now };
      this.chunks.push(observed);
      this.onChunk?.(observed, replica);
      return;
    }
    this.renewals.push({
      replica: replica.id,
      offsetMs: this.offsets.get(replica.id) ?? 0,
      executionKey: report.executionKey,
      fence: report.fence,
      at: report.at,
      ...(report.disarmed && { disarmed: report.disarmed }),
      ...(report.rearmed && { rearmed: report.rearmed }),
    });
  }

  processFault(fault: InjectedProcessFault): void {
    this.processFaults.push(fault);
    this.faults[fault.kind]++;
  }

  isBusy(replicaId: string): boolean {
    return (this.inFlight.get(replicaId)?.size ?? 0) > 0;
  }

  totalFaults(): number {
    return Object.values(this.faults).reduce((a, b) => a + b, 0);
  }
}
