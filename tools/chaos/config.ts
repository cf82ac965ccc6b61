/**
 * The faults a chaos replica injects into itself, passed from the drill to
 * each replica process through one environment variable.
 */
import { localConfig } from '../../lib/aws/config.ts';

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
  'poison',
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

export function chaosConfigFromEnv(env?: Record<string, string | undefined>): ReplicaChaosConfig | undefined {
  const raw = localConfig(env).chaos;
  return raw ? (JSON.parse(raw) as ReplicaChaosConfig) : undefined;
}

export function parseFaultList(list: string): FaultKind[] {
  if (list === 'all') return [...FAULT_KINDS];
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(FAULT_KINDS as readonly string[]).includes(name)) {
      throw new RangeError(`unknown fault ${JSON.stringify(name)}; known: ${FAULT_KINDS.join(', ')}, or "all"`);
    }
  }
  return names as FaultKind[];
}

/** Per-message, per-call or per-try probabilities of the faults that have one (see docs/chaos.md), unless `--rates` says otherwise. */
export const DEFAULT_FAULT_RATES = {
  drop: 0.02,
  duplicate: 0.05,
  replay: 0.03,
  delay: 0.05,
  ambiguousCommit: 0.03,
  throttle: 0.02,
  hang: 0.002,
  lateDuplicate: 0.05,
} as const;
export type RateName = keyof typeof DEFAULT_FAULT_RATES;
export type FaultRates = Record<RateName, number>;

/** `hang=0.01,throttle=0.05`: overrides of DEFAULT_FAULT_RATES. @throws {RangeError} naming the bad entry */
export function parseFaultRates(list: string): Partial<FaultRates> {
  const rates: Partial<FaultRates> = {};
  for (const entry of list
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [name, value, ...rest] = entry.split('=');
    if (name === undefined || !(name in DEFAULT_FAULT_RATES)) {
      throw new RangeError(
        `unknown rate ${JSON.stringify(name)} in ${JSON.stringify(entry)}; known: ${Object.keys(DEFAULT_FAULT_RATES).join(', ')}`,
      );
    }
    const rate = Number(value);
    if (rest.length > 0 || value === undefined || value.trim() === '' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
      throw new RangeError(`rate ${name} must be a probability from 0 to 1; got ${JSON.stringify(value ?? '')}`);
    }
    rates[name as RateName] = rate;
  }
  return rates;
}
