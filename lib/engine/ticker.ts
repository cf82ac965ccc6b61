/**
 * The per-minute tick: one scan request per shard on the scan queue. In AWS
 * an EventBridge rule invokes it; locally the dev runtime's timer does.
 */
import type { ScanQueue } from '../core/ports.ts';

export async function tick(scanQueue: ScanQueue, shardCount: number): Promise<number> {
  await scanQueue.send(Array.from({ length: shardCount }, (_, shard) => ({ shard })));
  return shardCount;
}
