/**
 * Roles a registered key can hold. Root keys are not registered: they live in
 * the pinned trust root and sign only the genesis statement and rotations.
 *
 * `service` is the one role of every service key under authority rules
 * version 1. From version 2 (SPEC.md section 7.3) each service has its own
 * role, so that a statement type is bound to the service that may write it:
 * `gate` (classifications, screening verdicts, confirmation requests,
 * decisions, refusals, fatigue signals), `timer` (timeouts, escalations) and
 * `bridge` (a chat bridge's answers, platform assurance by its role).
 *
 * `auditor` (authority rules 3) reads the whole log through the API (exports,
 * trails, proposals, decisions, receipts, metrics) and authors nothing.
 */
export const Role = {
  admin: 'admin',
  approver: 'approver',
  agent: 'agent',
  service: 'service',
  sequencer: 'sequencer',
  gate: 'gate',
  timer: 'timer',
  bridge: 'bridge',
  auditor: 'auditor',
} as const;

/** One of {@link Role}. */
export type Role = (typeof Role)[keyof typeof Role];

/** Every role, in a fixed order (used by schemas). */
export const ROLES = Object.values(Role) as [Role, ...Role[]];
