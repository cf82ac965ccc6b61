/**
 * The faults a chaos replica injects into itself, passed from the drill to
 * each replica process through one environment variable.
 */
export const FAULT_KINDS = [
  'kill',
  'pause',
  'scannerKill',
  'duplicate',
  'delay',
  'drop',
  'skew',
  'ambiguousCommit',
  'slowHandler',
  'lifecycle',
  'throttle',
  'hang',
  'lateDuplicate',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ReplicaChaosConfig {
  readonly seed: number;
  /** This process's clock offset (skew), ms. */
  readonly clockOffsetMs: number;
  /** Probability per sent work message of dropping it outright. */
  readonly dropRate: number;
  /** Probability per sent work message of sending 2 to 3 copies. */
  readonly duplicateRate: number;
  /** Probability per send call of sending the whole batch again (a replay). */
  readonly replayRate: number;
  /** Probability per sent work message of holding it back 1 to 5 s more. */
  readonly delayRate: number;
  /** Probability per commit of losing the reply after DynamoDB applied it. */
  readonly ambiguousCommitRate: number;
  /** Probability per DynamoDB or SQS call of refusing its first 1 to 3 tries (throttling, 500) before they are sent. */
  readonly throttleRate: number;
  /** Probability per DynamoDB or SQS request (each try) of sending it to a server that never answers. */
  readonly hangRate: number;
  /** Probability per sent work message of sending one more copy 2 to 6 s later. */
  readonly lateDuplicateRate: number;
}

export const CHAOS_ENV = 'CRONFENCE_CHAOS';

export function encodeChaosConfig(config: ReplicaChaosConfig): string {
  return JSON.stringify(config);
}

export function chaosConfigFromEnv(env: Record<string, string | undefined> = process.env): ReplicaChaosConfig | undefined {
  const raw = env[CHAOS_ENV];
  return raw ? (JSON.parse(raw) as ReplicaChaosConfig) : undefined;
}

export function parseFaultList(list: string): FaultKind[] {
  if (list === 'all') return [...FAULT_KINDS];
  const names = list.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(FAULT_KINDS as readonly string[]).includes(name)) {
      throw new RangeError(`unknown fault ${JSON.stringify(name)}; known: ${FAULT_KINDS.join(', ')}, or "all"`);
    }
  }
  return names as FaultKind[];
}
