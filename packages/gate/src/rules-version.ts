/**
 * Versions of the gate's rules (classifier tables, precedence, thresholds).
 * A classification and a decision name the version that made them
 * (`rulesVersion`; absent on statements written before versions existed,
 * which means 1). The project keeps every released version: `verify-chain`
 * replays each decision with the version it names, so tuning a weight or
 * adding a rule is a new version and never makes an old bundle fail.
 *
 * Version 2 reads commands, paths and tools by meaning (command-rules.ts);
 * the rulebook's version 2 also blocks a proposal whose key is revoked.
 */
export const RULES_VERSIONS = [1, 2] as const;

/** One released rules version. */
export type RulesVersion = (typeof RULES_VERSIONS)[number];

/** The version new decisions are made with. */
export const LATEST_RULES_VERSION: RulesVersion = 2;

/** True when `value` names a released rules version. */
export function isRulesVersion(value: unknown): value is RulesVersion {
  return typeof value === 'number' && (RULES_VERSIONS as readonly number[]).includes(value);
}
