import { Role } from './roles.js';
import type { StatementType } from './statements.js';

/**
 * Versions of the authority rules: who may register which key and which role
 * may author which statement type (SPEC.md section 7.3). A genesis names the
 * version its ledger follows (`authorityRulesVersion`; absent means 1, the
 * rules of ledgers written before versions existed), so a ledger is judged by
 * the rules it was written under for its whole life, and old bundles keep
 * verifying.
 *
 * - 1: one admin signature registers any key; every service statement needs
 *   the generic `service` role; a `human.response` says its own assurance.
 * - 2: four eyes on privileged and additional keys, proof of possession,
 *   agents hold the agent role only; each statement type has its authoring
 *   role (gate, timer, bridge); a bridge's answers are platform assurance
 *   because of its role; an agent's risk threshold is part of its
 *   registration.
 * - 3: the rules of 2, and every checkpoint is signed under two key names:
 *   its origin line `<origin>/<partition>` (the name C2SP tools look a log's
 *   key up by) and the ledger origin, both signatures required (SPEC.md
 *   section 6). Under 1 and 2 a checkpoint is signed under the ledger origin.
 *   Version 3 also knows the `auditor` role: reads everything through the
 *   API, authors nothing, registered under four eyes like every privileged key.
 */
export const AUTHORITY_RULES_VERSIONS = [1, 2, 3] as const;

/** One released authority rules version. */
export type AuthorityRulesVersion = (typeof AUTHORITY_RULES_VERSIONS)[number];

/** The version `ledger init` and `ledger genesis` write. */
export const LATEST_AUTHORITY_RULES_VERSION: AuthorityRulesVersion = 3;

/**
 * Roles that may author each statement type under authority rules version 2
 * (any one of them). `root` means signed by trust-root keys (genesis, rotations).
 */
export const AUTHOR_ROLES_V2: Readonly<Record<StatementType, readonly Role[] | 'root'>> = {
  genesis: 'root',
  'key.registered': [Role.admin],
  'key.revoked': [Role.admin],
  'root.rotated': 'root',
  'grant.proposed': [Role.admin],
  'grant.cosigned': [Role.admin],
  'grant.revoked': [Role.admin],
  'grant.reauthorized': [Role.admin],
  'proposal.submitted': [Role.agent],
  'classification.recorded': [Role.gate],
  'screening.verdict': [Role.gate],
  'confirmation.requested': [Role.gate],
  'human.response': [Role.approver, Role.bridge],
  'timeout.recorded': [Role.timer],
  'escalation.raised': [Role.timer],
  'decision.recorded': [Role.gate],
  'refusal.recorded': [Role.gate],
  'intake.rejected': [Role.sequencer],
  'grant.suggested': [Role.gate],
  'approval.rushed': [Role.gate],
  'notification.sent': [Role.bridge],
  'execution.refused': [Role.agent],
};

/**
 * Roles that make a principal privileged under version 2: registering a key
 * with one of them, or any further key of an existing principal, needs four
 * eyes (SPEC.md section 7.3). Only the `agent` role is not privileged.
 */
export function isPrivileged(roles: readonly Role[]): boolean {
  return roles.some((role) => role !== Role.agent);
}

/**
 * Risk threshold of an agent under authority rules 2 when neither its
 * registration nor the genesis names one: the strictest of the per-channel
 * defaults of rules 1 (the API's), so that an agent nobody configured gets
 * the most human attention.
 */
export const DEFAULT_RISK_THRESHOLD = 1.5;

/**
 * Distinct admin principals, other than the subject, whose signatures a
 * privileged or additional key registration needs under authority rules 2:
 * the tier-4 co-signer count of the grant policy, never fewer than two.
 */
export function keyRegistrationSigners(grantCosigners: readonly number[]): number {
  return Math.max(2, grantCosigners[4] ?? 2);
}
