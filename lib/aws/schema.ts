/**
 * The one definition of cronfence's tables, indexes and queues. The local
 * bootstrap (bootstrap.ts) and the CDK construct both build from these
 * objects, so local and cloud schemas cannot drift; a test compares the
 * synthesized template with what the bootstrap created.
 *
 * Access patterns:
 * - jobs, by id: CRUD, and the definitions a scanner and a worker read.
 * - wheel, by shard + entry: the timing wheel (core/wheel.ts): a shard's
 *   inbox of new generations, its entries by bucket ("which jobs of shard S
 *   are due in bucket B"), and its cursor. Written once per job and bucket
 *   it is due in, packed many jobs to an item; expires by TTL.
 * - slices, by jobId + scheduledAt: claim, renew, commit, history of a job
 *   (`cronfence runs`). A SUCCEEDED or DEAD slice is the ledger record of its
 *   execution (core/ledger.ts): the slice key is the unique constraint.
 *   The claim creates a slice. "sweep" (sparse GSI, sweepShard + sweepAt):
 *   the live slices that wait on purpose (a retry, a buffered run, an
 *   operator's slot) or that the reconciler found without a message; final
 *   slices drop `sweepShard`. A claim's slice on the happy path never enters it.
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
  readonly projection:
    { readonly type: 'ALL' } | { readonly type: 'KEYS_ONLY' } | { readonly type: 'INCLUDE'; readonly nonKeyAttributes: readonly string[] };
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
  globalSecondaryIndexes: [],
};

/** The timing wheel (core/wheel.ts, lib/aws/dynamo/wheel-store.ts): one partition per shard. */
export const WHEEL_TABLE: TableDefinition = {
  logicalName: 'wheel',
  partitionKey: { name: 'shard', type: 'N' },
  sortKey: { name: 'entry', type: 'S' },
  globalSecondaryIndexes: [],
  timeToLiveAttribute: 'expiresAt',
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
      // Keys only, and the claim leaves sweepAt alone: claims and renewals cost no index write.
      projection: { type: 'KEYS_ONLY' },
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

export const TABLES = [JOBS_TABLE, WHEEL_TABLE, SLICES_TABLE, CHUNKS_TABLE] as const;

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
