/**
 * The chaos replica's slice store wrapper: reports each lease renewal the store accepted, with whether it disarmed
 * or re-armed the holder's-message-back takeover, so the drill can check renewals against fences and measure failover from a
 * victim's last renewal (renewals.jsonl). Outside the fault wrappers: a renewal a fault refused is not reported.
 */
import type { FencedClaim } from '../../lib/core/claim.ts';
import type { MessageBackChange, SliceStore } from '../../lib/core/ports.ts';
import type { SliceKey } from '../../lib/core/slice.ts';

export interface AcceptedRenewal {
  readonly key: SliceKey;
  readonly fence: number;
  /** When the renewal was sent, by the replica's clock. */
  readonly at: number;
  readonly disarmed: boolean;
  readonly rearmed: boolean;
}

export function reportingRenewals(inner: SliceStore, onRenewed: (renewal: AcceptedRenewal) => void): SliceStore {
  return Object.assign(Object.create(inner) as SliceStore, {
    async renew(claim: FencedClaim, now: number, leaseMs: number, messageBack?: MessageBackChange): Promise<void> {
      await inner.renew(claim, now, leaseMs, messageBack);
      onRenewed({
        key: claim.key,
        fence: claim.fence,
        at: now,
        disarmed: messageBack === 'disarm',
        rearmed: typeof messageBack === 'object',
      });
    },
  });
}
