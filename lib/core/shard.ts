/**
 * Jobs are spread over shards by a stable hash of their id, so each scanner
 * invocation reads one slice of the "due" index and no index partition gets
 * every job. FNV-1a: stable across processes and runtimes, no dependency.
 */
export function shardOf(jobId: string, shardCount: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) {
    hash ^= jobId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shardCount;
}
