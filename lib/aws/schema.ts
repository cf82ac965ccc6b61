/**
 * The one definition of cronfence's tables, indexes and queues. The local
 * bootstrap (bootstrap.ts) and the CDK construct both build from these
 * objects, so local and cloud schemas cannot drift; a test compares the
 * synthesized template with what the bootstrap created.
 *
 * Access patterns:
 * - jobs, by id: CRUD. "due" (sparse GSI, dueShard + nextFireAt): the
 *   scanner's "which jobs of shard S fire before T"; paused jobs drop
 *   `dueShard` and leave it.
 * - slices, by jobId + scheduledAt: claim, renew, commit, history of a job
 *   (`cronfence runs`). A SUCCEEDED or DEAD slice is the ledger record of its
 *   execution (core/ledger.ts): the slice key is the unique constraint.
 *   "sweep" (sparse GSI, sweepShard + sweepAt): live slices whose message may
 *   be lost; final slices drop `sweepShard`.
 * - chunks, by executionKey + item: chunk records (checkpoint) and outbox
 *   items of chunked slices; "outbox" (sparse GSI): pending deliveries.
 */
export type AttributeType = 'S' | 'N';

export interface KeyDefinition {
  readonly name: string;
  readonly type: AttributeType;
}

export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: KeyDefinition;
  readonly sortKey?: KeyDefinition;
  readonly projection: { readonly type: 'ALL' } | { readonly type: 'KEYS_ONLY' } | { readonly type: 'INCLUDE'; readonly nonKeyAttributes: readonly string[] };
}

export interface TableDefinition {
  /** Logical name; the physical name is `${prefix}-${logicalName}`. */
  readonly logicalName: string;
  readonly partitionKey: KeyDefinition;
  readonly sortKey?: KeyDefinition;
  readonly globalSecondaryIndexes: readonly IndexDefinition[];
  /** Epoch-seconds attribute DynamoDB expires items by. */
  readonly timeToLiveAttribute?: string;
}

export interface QueueDefinition {
  readonly logicalName: string;
  /** The failover timer: a message whose holder stops renewing surfaces after this. */
  readonly visibilityTimeoutSeconds: number;
  readonly messageRetentionSeconds: number;
  readonly receiveMessageWaitTimeSeconds: number;
  /** Redrive to the dead-letter queue after this many receives. */
  readonly maxReceiveCount?: number;
}

export const JOBS_TABLE: TableDefinition = {
  logicalName: 'jobs',
  partitionKey: { name: 'jobId', type: 'S' },
  globalSecondaryIndexes: [
    {
      indexName: 'due',
      partitionKey: { name: 'dueShard', type: 'N' },
      sortKey: { name: 'nextFireAt', type: 'N' },
      projection: { type: 'ALL' },
    },
  ],
};

export const SLICES_TABLE: TableDefinition = {
  logicalName: 'slices',
  partitionKey: { name: 'jobId', type: 'S' },
  sortKey: { name: 'scheduledAt', type: 'N' },
  globalSecondaryIndexes: [
    {
      indexName: 'sweep',
      partitionKey: { name: 'sweepShard', type: 'N' },
      sortKey: { name: 'sweepAt', type: 'N' },
      // Only what never changes while the slice is live is projected, and the claim leaves sweepAt alone:
      // claims and renewals cost no index write; a slice enters the index once and leaves it once.
      // scanId: a redelivered scan re-sends exactly the slices its crashed first delivery created.
      projection: { type: 'INCLUDE', nonKeyAttributes: ['scanId'] },
    },
  ],
  timeToLiveAttribute: 'expiresAt',
};

/**
 * Chunk records and outbox items of chunked slices (lib/core/chunks.ts), one
 * partition per execution: sort key `chunk#000012` (the checkpoint: one Query
 * reads a slice's committed chunks) or `outbox#<request key>`. "outbox"
 * (sparse GSI, outboxShard + dueAt): pending outbound requests the dispatcher
 * delivers; delivered and dead ones drop `outboxShard` and leave it.
 */
export const CHUNKS_TABLE: TableDefinition = {
  logicalName: 'chunks',
  partitionKey: { name: 'executionKey', type: 'S' },
  sortKey: { name: 'item', type: 'S' },
  globalSecondaryIndexes: [
    {
      indexName: 'outbox',
      partitionKey: { name: 'outboxShard', type: 'N' },
      sortKey: { name: 'dueAt', type: 'N' },
      projection: { type: 'ALL' },
    },
  ],
  timeToLiveAttribute: 'expiresAt',
};

export const TABLES = [JOBS_TABLE, SLICES_TABLE, CHUNKS_TABLE] as const;

export const DEAD_LETTER_QUEUE: QueueDefinition = {
  logicalName: 'dlq',
  visibilityTimeoutSeconds: 30,
  messageRetentionSeconds: 14 * 86_400,
  receiveMessageWaitTimeSeconds: 20,
};

export const WORK_QUEUE: QueueDefinition = {
  logicalName: 'work',
  // One heartbeat short of the default 4 s lease (see messageVisibilitySeconds): a worker that dies,
  // even before its first heartbeat, has its message back, and a standby on it, within the lease.
  visibilityTimeoutSeconds: 3,
  messageRetentionSeconds: 4 * 86_400,
  receiveMessageWaitTimeSeconds: 20,
  // Receives are many per slice by design (lease holds, retries); this is a backstop for poison messages.
  maxReceiveCount: 50,
};

export const SCAN_QUEUE: QueueDefinition = {
  logicalName: 'scan',
  // A scanner renews its scan message while it works; a dead scanner's shard is rescanned after this.
  visibilityTimeoutSeconds: 5,
  messageRetentionSeconds: 3600,
  receiveMessageWaitTimeSeconds: 20,
  maxReceiveCount: 20,
};

export const QUEUES = [DEAD_LETTER_QUEUE, WORK_QUEUE, SCAN_QUEUE] as const;

export const EVENT_BUS_LOGICAL_NAME = 'events';

/** The `source` of every lifecycle event cronfence puts on its bus. */
export const EVENT_SOURCE = 'cronfence';
