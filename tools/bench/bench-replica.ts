/**
 * The bench's replica (lib/local/replica.ts): workers run the bench's
 * handlers (bench-jobs.ts), and every event but `claimed` goes to the parent
 * (claimed events would double the IPC traffic for nothing; the sparse run's
 * few are forwarded, for their waits); each carries
 * the request meter (tools/meter/replica-meter.ts).
 *
 *   node --import tsx tools/bench/bench-replica.ts worker|scanner <id>
 */
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { startReplica } from '../../lib/local/replica.ts';
import { attachMeter } from '../meter/replica-meter.ts';
import { BENCH_HANDLERS } from './bench-jobs.ts';
import { SPARSE_PREFIX } from './sparse.ts';

startReplica('bench-replica.ts', () => ({
  handlers: new HandlerRegistry(BENCH_HANDLERS),
  // The sparse run's claims give each message's processing start, for its wait (sparse.ts).
  forwards: (event) => event.type !== 'claimed' || event.jobId.startsWith(SPARSE_PREFIX),
  attach: attachMeter,
}));
