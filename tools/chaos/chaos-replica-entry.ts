/**
 * The replica the chaos drill forks (chaos-replica.ts).
 *
 *   node --import tsx tools/chaos/chaos-replica-entry.ts worker|scanner <id>   (env: CRONFENCE_CHAOS)
 */
import { startReplica } from '../../lib/local/replica.ts';
import { chaosReplica } from './chaos-replica.ts';

startReplica('chaos-replica-entry.ts', chaosReplica());
