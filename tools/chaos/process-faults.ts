/**
 * Stopping a replica the two ways the drill does (the fault plan's and the
 * settlement drill's mid-batch faults): a kill (SIGKILL, then a replacement
 * in the same slot) or a pause (SIGSTOP for `pauseMs`, then SIGCONT). Each is
 * recorded as a process fault, the failover checks' starting point.
 */
import { sleepUntil, type Clock } from '../../lib/core/clock.ts';
import type { Replica, ReplicaFleet, ReplicaRole } from '../../lib/local/fleet.ts';
import type { ProcessFaultKind } from './fault-plan.ts';
import type { HistoryRecorder } from './recorder.ts';

export interface ProcessFaultDeps {
  readonly fleet: ReplicaFleet;
  readonly recorder: HistoryRecorder;
  readonly clock: Clock;
  readonly spawn: (role: ReplicaRole, slot: number) => Replica;
}

/** @returns once a paused victim runs again, or a killed one's replacement was started. */
export function stopReplica(deps: ProcessFaultDeps, victim: Replica, kind: ProcessFaultKind, pauseMs: number): Promise<void> {
  const { fleet, recorder, clock } = deps;
  if (kind === 'pause') {
    victim.process.kill('SIGSTOP');
    const at = clock.now();
    recorder.paused.add(victim.id);
    return sleepUntil(clock, at + pauseMs).then(() => {
      victim.process.kill('SIGCONT');
      recorder.paused.delete(victim.id);
      recorder.processFault({ kind: 'pause', replica: victim.id, at, until: clock.now() });
    });
  }
  const role: ReplicaRole = kind === 'scannerKill' ? 'scanner' : 'worker';
  const slot = Number(/-(\d+)\./.exec(victim.id)?.[1] ?? 1);
  fleet.kill(victim);
  recorder.processFault({ kind, replica: victim.id, at: clock.now() });
  return victim.exited.then(() => void deps.spawn(role, slot));
}
