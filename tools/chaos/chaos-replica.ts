/**
 * The chaos drill's replica plan (lib/local/replica.ts): the replica skews
 * its clock, wraps its SDK clients and its ports with the faults the drill
 * gave it (CRONFENCE_CHAOS), runs the drill's handlers, and reports each
 * fault and lease renewal to the drill, all through `decoratePorts`. An entry module starts it
 * (chaos-replica-entry.ts; a test's broken-engine entry passes a store of
 * its own through `slices`).
 */
import { OffsetClock, systemClock } from '../../lib/core/clock.ts';
import { executionKey } from '../../lib/core/execution-key.ts';
import type { SliceStore } from '../../lib/core/ports.ts';
import { createAwsClients, type AwsClients } from '../../lib/aws/clients.ts';
import { loadConfig, type CronfenceConfig } from '../../lib/aws/config.ts';
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { merchantSettlement } from '../../examples/jobs/settlement.ts';
import type { ReplicaSetup } from '../../lib/local/replica.ts';
import { attachMeter } from '../meter/replica-meter.ts';
import { HangServer, injectClientFaults } from './chaos-clients.ts';
import { chaosHandlers } from './chaos-jobs.ts';
import { chaosSliceStore, chaosWorkQueue, type FaultReporter } from './chaos-ports.ts';
import { chaosConfigFromEnv } from './config.ts';
import { reportingRenewals } from './renewal-reports.ts';
import { reportingChunks } from './settlement-chunks.ts';
import { SeededRandom } from './random.ts';

export interface ChaosReplicaOptions {
  /** Replaces the slice store under the faults (the drill test's broken engine). */
  readonly slices?: (store: SliceStore, parts: { readonly clients: AwsClients; readonly config: CronfenceConfig }) => SliceStore;
}

/** @throws {Error} when the replica was started without CRONFENCE_CHAOS (only the drill starts it). */
export function chaosReplica(options: ChaosReplicaOptions = {}): ReplicaSetup {
  return async ({ id }, toParent) => {
    const chaos = chaosConfigFromEnv();
    if (!chaos) throw new Error('the chaos replica needs its faults in CRONFENCE_CHAOS (npm run chaos sets it)');
    const config = loadConfig();
    const random = new SeededRandom(chaos.seed ^ hashId(id));
    const report: FaultReporter = (fault, executionKey, request, jobIds) =>
      toParent({
        kind: 'fault',
        fault,
        ...(executionKey ? { executionKey } : {}),
        ...(request ? { request } : {}),
        ...(jobIds && jobIds.length > 0 ? { jobIds } : {}),
      });
    const clients = createAwsClients();
    const hangServer = chaos.hangRate > 0 ? await new HangServer().start() : undefined;
    injectClientFaults(clients, {
      config: chaos,
      random,
      report,
      hangServer,
      onReceived: (receive) => toParent({ kind: 'received', ...receive }),
    });
    const inner = (store: SliceStore): SliceStore => (options.slices ? options.slices(store, { clients, config }) : store);
    return {
      // The settlement drill's job (npm run chaos -- --settlement) beside the drill's own.
      handlers: new HandlerRegistry([...chaosHandlers(config.prefix, random, true), merchantSettlement]),
      // The drill's report counts the replicas' AWS requests.
      attach: attachMeter,
      runtime: {
        clients,
        clock: chaos.clockOffsetMs ? new OffsetClock(chaos.clockOffsetMs) : systemClock,
        decoratePorts: (ports) => {
          const slices = reportingRenewals(
            chaosSliceStore(inner(ports.slices), chaos, random, report),
            ({ key, fence, at, disarmed, rearmed }) =>
              toParent({
                kind: 'renewed',
                executionKey: executionKey(key.jobId, key.scheduledAt),
                fence,
                at,
                ...(disarmed && { disarmed }),
                ...(rearmed && { rearmed }),
              }),
          );
          const workQueue = chaosWorkQueue(ports.workQueue, chaos, random, report, (sent) => toParent({ kind: 'sent', ...sent }));
          const chunkReports = reportingChunks({ slices, chunks: ports.chunks }, (chunk) =>
            toParent({ kind: 'chunk', ...chunk, at: Date.now() }),
          );
          return { ...ports, workQueue, slices: chunkReports.slices, chunks: chunkReports.chunks };
        },
      },
    };
  };
}

/** A replica's own seed from its id (the faults differ by replica). */
function hashId(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0;
  return h;
}
