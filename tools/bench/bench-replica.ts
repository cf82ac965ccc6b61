/**
 * The bench's replica (lib/local/replica.ts): workers run the bench's
 * handlers (bench-jobs.ts), and every event but `claimed` goes to the parent
 * (claimed events would double the IPC traffic for nothing); each carries
 * the request meter (tools/meter/replica-meter.ts).
 *
 *   node --import tsx tools/bench/bench-replica.ts worker|scanner <id>
 */
import { HandlerRegistry } from '../../lib/engine/define-job.ts';
import { startReplica } from '../../lib/local/replica.ts';
import { attachMeter } from '../meter/replica-meter.ts';
import { BENCH_HANDLERS } from './bench-jobs.ts';

startReplica('bench-replica.ts', () => ({
  handlers: new HandlerRegistry(BENCH_HANDLERS),
  forwards: (event) => event.type !== 'claimed',
  attach: attachMeter,
}));
