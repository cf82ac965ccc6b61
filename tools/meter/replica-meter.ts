/**
 * The request meter on the local replicas (lib/local/replica.ts,
 * lib/local/fleet.ts): each replica entry of the tools attaches one to its
 * runtime's clients (`attach: attachMeter`); the parent (`cronfence dev` of
 * the repository, the drill, the bench) asks the live replicas for their
 * snapshots and adds up the last ones they send as they stop.
 */
import { CronfenceError } from '../../lib/core/errors.ts';
import type { Replica, ReplicaFleet, ReplicaRole, ToolMessage } from '../../lib/local/fleet.ts';
import type { ReplicaAttachment } from '../../lib/local/replica.ts';
import type { Runtime } from '../../lib/lambda/wiring.ts';
import { addSnapshots, emptySnapshot, RequestMeter, type MeterSnapshot } from './request-meter.ts';

/** Parent -> replica: send your meter now. */
export interface MeterRequest {
  readonly kind: 'tools:meter-request';
}

/** Replica -> parent: its meter, on request, and once more (`final`) as it exits. */
export interface MeterReport {
  readonly kind: 'tools:meter';
  readonly snapshot: MeterSnapshot;
  readonly final: boolean;
}

export interface RoleMeters {
  readonly scanner: MeterSnapshot;
  readonly worker: MeterSnapshot;
}

const METER_TIMEOUT_MS = 10_000;

/** The replica side: a meter on the runtime's clients, answering the parent's requests. */
export function attachMeter(runtime: Runtime): ReplicaAttachment {
  const meter = new RequestMeter(runtime.config).attach(runtime.clients);
  const report = (final: boolean): MeterReport => ({ kind: 'tools:meter', snapshot: meter.snapshot(), final });
  return {
    answer: (message) => (message.kind === 'tools:meter-request' ? report(false) : undefined),
    last: () => report(true),
  };
}

function isMeterReport(message: ToolMessage): message is MeterReport {
  return message.kind === 'tools:meter';
}

/** The parent side: give `onToolMessage` to the fleet's options. */
export class FleetMeters {
  private readonly pending = new Map<string, (snapshot: MeterSnapshot) => void>();
  /** The meters the replicas sent as they stopped (a killed replica sends none). */
  private stopped: MeterSnapshot = emptySnapshot();

  readonly onToolMessage = (message: ToolMessage, replica: Replica): void => {
    if (!isMeterReport(message)) return;
    if (message.final) this.stopped = addSnapshots(this.stopped, message.snapshot);
    this.pending.get(replica.id)?.(message.snapshot);
    this.pending.delete(replica.id);
  };

  /** AWS requests, by service.Operation, of the replicas that stopped cleanly. */
  get requests(): Record<string, number> {
    return this.stopped.requests;
  }

  /** The live replicas' meters now, added up by role. */
  async of(fleet: ReplicaFleet): Promise<RoleMeters> {
    const members = fleet.list();
    const snapshots = await Promise.all(members.map((member) => this.meterOf(fleet, member)));
    const byRole = (role: ReplicaRole): MeterSnapshot =>
      snapshots.filter((_, i) => members[i]?.role === role).reduce(addSnapshots, emptySnapshot());
    return { scanner: byRole('scanner'), worker: byRole('worker') };
  }

  private meterOf(fleet: ReplicaFleet, member: Replica): Promise<MeterSnapshot> {
    return new Promise<MeterSnapshot>((resolve, reject) => {
      const timer = setTimeout(() => reject(new CronfenceError(`replica ${member.id} did not report its meter`)), METER_TIMEOUT_MS);
      this.pending.set(member.id, (snapshot) => {
        clearTimeout(timer);
        resolve(snapshot);
      });
      const request: MeterRequest = { kind: 'tools:meter-request' };
      fleet.send(member, request);
    });
  }
}
