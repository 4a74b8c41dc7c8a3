import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { Tier } from '@agent-ledger/gate';

/** How an approval was signed: by the approver's own key, or by a service on a platform's word. */
export type Assurance = 'self_signed' | 'platform';

/** Which answers may count toward a confirmation, by tier and assurance. */
export interface AssurancePolicy {
  /** Highest tier at which a platform-assurance answer still counts. */
  readonly maxPlatformTier: number;
  /** Whether an answer of this assurance may count for a request of this tier. */
  mayCount(tier: number, assurance: Assurance): boolean;
}

/**
 * A policy under which chat (platform-assurance) answers count only up to
 * `maxPlatformTier`; above it, only an approver's self-signed answer counts.
 * The default, `Tier.medium`, means tiers high (3) and critical (4) need a
 * self-signed approval: a chat account is weaker evidence than a key.
 */
export function requireSelfSignedAbove(maxPlatformTier: number = Tier.medium): AssurancePolicy {
  if (!Number.isInteger(maxPlatformTier) || maxPlatformTier < -1 || maxPlatformTier > Tier.critical) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'maxPlatformTier must be an integer from -1 (never) to 4 (always)');
  }
  return Object.freeze({
    maxPlatformTier,
    mayCount(tier: number, assurance: Assurance): boolean {
      if (assurance === 'self_signed') return true;
      return assurance === 'platform' && Number.isInteger(tier) && tier <= maxPlatformTier;
    },
  });
}
